-- Placing rows in iterations: the one rule for requests, JMeter summariser lines, k6 metric points and host
-- samples (docs/warehouse.md, "Placing rows in iterations"). A stamp t written at the source's clock
-- resolution r stands for [t, t + r): the row belongs to the iteration whose window [start, end) that
-- interval overlaps; overlapping two, to the one with the larger overlap (equal: the earlier); none, to no
-- iteration (NULL: kept and counted). With r = 0 (host samples) it is start <= t < end. The source's pinned
-- iteration wins over all of this.
--
-- Speed: a plain range join sorted all 10 M requests of a run (piecewise merge join, 11 s); an ASOF join
-- held 3.5 GB; a hash join on a bucket of time plus an exact test takes 0.2 s. With a constant r the rule
-- gives each iteration a reach: the stamps t that go to it form one interval [reach_from_us, reach_to_us)
-- (from start - r + 1; where two windows are closer than r, split where their overlaps are equal), and
-- reaches never overlap, so the bucket join's exact test finds at most one. The split assumes an iteration
-- lasts at least r (1 s at most). A bucket is one second, or wider when the run is long, so that there are
-- never more than ~100 000 of them. Times are epoch microseconds: timestamptz arithmetic goes through ICU.
-- upstream: iterations, load_context
create or replace temp macro iteration_bucket_width_us(run) as (
    select greatest(1000000, (max(epoch_us(ended_at)) - min(epoch_us(started_at))) // 100000)
    from iterations
    where run_id = run
);

-- One row per (iteration, bucket its reach touches) at resolution r.
create or replace temp macro iteration_buckets(run, r) as table
    with windows as (
        select iteration, epoch_us(started_at) as start_us, epoch_us(ended_at) as end_us
        from iterations
        where run_id = run
    ),

    splits as (
        select
            *,
            case when r > 0 then (lag(end_us) over in_time + start_us - r) // 2 + 1 end as split_before_us,
            case when r > 0 then (end_us + lead(start_us) over in_time - r) // 2 + 1 end as split_after_us
        from windows
        window in_time as (order by start_us)
    ),

    reaches as (
        select
            iteration,
            start_us,
            end_us,
            greatest(start_us - greatest(r - 1, 0), split_before_us) as reach_from_us,
            least(end_us, split_after_us) as reach_to_us
        from splits
    )

    select
        *,
        unnest(range(
            reach_from_us // iteration_bucket_width_us(run),
            (reach_to_us - 1) // iteration_bucket_width_us(run) + 1
        )) as bucket_no
    from reaches
    where reach_to_us > reach_from_us;

-- The rows of relation `rows_name` (a view or a CTE of the caller) with their `iteration`, `at_us` being
-- their time in epoch microseconds (an expression over their columns, NULL for a row without a time). The
-- run, resolution and pinned iteration come from `load_context` (tasks/warehouse/sources/base.py:
-- set_load_context), the one row a reader publishes for its source.
create or replace temp macro placed_in_iterations(rows_name, at_us) as table
    select
        staged.*,
        coalesce((select pinned_iteration from load_context), reaches.iteration) as iteration
    from query_table(rows_name) as staged
    left join iteration_buckets(
        (select run_id from load_context), (select resolution_us from load_context)
    ) as reaches
        on at_us // iteration_bucket_width_us((select run_id from load_context)) = reaches.bucket_no
        and at_us >= reaches.reach_from_us
        and at_us < reaches.reach_to_us;
