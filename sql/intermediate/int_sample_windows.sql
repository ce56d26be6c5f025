-- For every timed series of host-metric samples and every iteration, the two samples that bound its counter
-- deltas (jstat GC counts and times, docker network and block bytes): the last sample before the iteration's
-- end, minus the last sample before its start (or, when the series starts inside the iteration, its first
-- sample there: events before it are not seen). A series with no sample inside the iteration has no row.
-- Lines of one file are in time order, so "last" = highest line number. Times are placed as the samples'
-- iterations are: by written time - skew for the sources clock_corrections names, else as written.
-- materialized: table
-- grain: source_key, series, iteration -- series is the container ('' for vmstat and jstat)
-- upstream: host_sample_facts, iterations, clock_corrections
with samples as (
    select
        facts.source_key,
        coalesce(facts.container, '') as series,
        facts.line_no,
        epoch_us(facts.sampled_at) - coalesce(corrections.skew_us, 0) as placed_us
    from host_sample_facts as facts
    left join clock_corrections($run_id) as corrections on corrections.source_key = facts.source_key
    where facts.run_id = $run_id and facts.sampled_at is not null and not facts.is_since_boot
),

iterations as (
    select iteration, epoch_us(started_at) as start_us, epoch_us(ended_at) as end_us
    from iterations
    where run_id = $run_id
),

bounds as (
    select
        samples.source_key,
        samples.series,
        iterations.iteration,
        max(samples.line_no) filter (where samples.placed_us < iterations.start_us) as before_start_line_no,
        min(samples.line_no) filter (where samples.placed_us >= iterations.start_us) as first_inside_line_no,
        max(samples.line_no) as end_line_no
    from samples
    join iterations on samples.placed_us < iterations.end_us
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
