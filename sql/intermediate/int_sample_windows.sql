-- For every timed series of host-metric samples and every iteration, the two samples that bound its counter
-- deltas (jstat GC counts and times, docker network and block bytes): the last sample before the iteration's
-- end, minus the last sample before its start (or, when the series starts inside the iteration, its first
-- sample there: events before it are not seen). A series with no sample inside the iteration has no row.
-- Lines of one file are in time order, so "last" = highest line number.
-- grain: one row per (source_key, series, iteration); series is the container ('' for vmstat and jstat)
-- upstream: host_sample_facts, iterations
with samples as (
    select source_key, coalesce(container, '') as series, line_no, sampled_at
    from host_sample_facts
    where run_id = $run_id and sampled_at is not null and not is_since_boot
),

iterations as (
    select iteration, started_at, ended_at from iterations where run_id = $run_id
),

bounds as (
    select
        samples.source_key,
        samples.series,
        iterations.iteration,
        max(samples.line_no) filter (where samples.sampled_at < iterations.started_at) as before_start_line_no,
        min(samples.line_no) filter (where samples.sampled_at >= iterations.started_at) as first_inside_line_no,
        max(samples.line_no) as end_line_no
    from samples
    join iterations on samples.sampled_at < iterations.ended_at
    group by samples.source_key, samples.series, iterations.iteration
),

final as (
    select
        source_key,
        series,
        iteration,
        coalesce(before_start_line_no, first_inside_line_no) as start_line_no,
        end_line_no
    from bounds
    where first_inside_line_no is not null
)

select * from final
