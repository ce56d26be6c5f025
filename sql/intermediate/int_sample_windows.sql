-- For every timed series of host-metric samples and every iteration, the two samples that bound its counter
-- deltas (jstat GC counts and times, docker network and block bytes): the last sample before the iteration's
-- end, minus the last sample before its start (or, when the series starts inside the iteration, its first
-- sample there: events before it are not seen). A series with no sample inside the iteration has no row.
-- An iteration's warm-up counts as before its start: its samples (int_host_samples.is_warmup) open the window.
-- Lines of one file are in time order, so "last" = highest line number. Times are placed as the samples'
-- iterations are (int_host_samples.placed_us).
-- materialized: table
-- grain: source_key, series, iteration -- series is the container ('' for vmstat and jstat)
-- upstream: int_host_samples, iterations
with samples as (
    select source_key, coalesce(container, '') as series, line_no, placed_us, iteration, is_warmup
    from int_host_samples
    where sampled_at is not null and not is_since_boot
),

iterations as (
    select iteration, epoch_us(started_at) as start_us, epoch_us(ended_at) as end_us
    from iterations
    where run_id = $run_id
),

-- before_measured: placed before the iteration's start, or in its warm-up
placed as (
    select
        samples.source_key,
        samples.series,
        samples.line_no,
        iterations.iteration,
        samples.placed_us < iterations.start_us
            or coalesce(samples.iteration = iterations.iteration and samples.is_warmup, false) as before_measured
    from samples
    join iterations on samples.placed_us < iterations.end_us
),

bounds as (
    select
        source_key,
        series,
        iteration,
        max(line_no) filter (where before_measured) as before_start_line_no,
        min(line_no) filter (where not before_measured) as first_inside_line_no,
        max(line_no) as end_line_no
    from placed
    group by source_key, series, iteration
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
