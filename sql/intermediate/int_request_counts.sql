-- The requests of a run's counted sides (int_request_paths.is_by_counts) as counts of each distinct duration, at the
-- grains their readers need, from one read of the rows: `minute` (side, host, UTC minute, iteration) for
-- minute_stats, `iteration` (side, host, role, status, label, iteration, warm-up or not) for int_request_stats and
-- int_requirement_stats, and `total` (side, iteration, placed by overlap or not; no duration) for
-- int_run_request_totals. A 100 M-line millisecond log becomes a few hundred thousand rows that every percentile,
-- requirement, minute and run total is read from, instead of each of them reading the 100 M rows again.
-- `minute_us`: the minute by integer arithmetic (date_trunc on a timestamptz goes through ICU: 3 s per 10 M rows).
-- In each grain's rows the other grain's keys are null.
-- materialized: table
-- grain: grain, side, host, role, status_code, label, iteration, is_warmup, is_boundary, minute_us, elapsed_ms
-- upstream: requests, int_request_paths
with counted as (
    select
        side, host, role, status_code, label, iteration, is_warmup, is_boundary,
        epoch_us(started_at) // 60000000 * 60000000 as minute_us, elapsed_ms, is_error
    from requests
    where run_id = $run_id and side in (select side from int_request_paths where is_by_counts)
),

final as (
    select
        case
            when grouping(minute_us) = 0 then 'minute'
            when grouping(elapsed_ms) = 0 then 'iteration'
            else 'total'
        end as grain,
        side, host, role, status_code, label, iteration, is_warmup, is_boundary, minute_us, elapsed_ms,
        count(*) as calls,
        count(*) filter (where is_error) as errors
    from counted
    group by grouping sets (
        (side, host, minute_us, iteration, elapsed_ms),
        (side, host, role, status_code, label, iteration, is_warmup, elapsed_ms),
        (side, iteration, is_boundary)
    )
)

select * from final
