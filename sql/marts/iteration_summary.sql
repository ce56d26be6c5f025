-- Public mart: per-iteration request statistics at the side level; calls_per_s = calls / duration_s.
-- grain: one row per (run_id, iteration, side)
-- upstream: int_request_stats
with stats as (
    select * from int_request_stats where run_id = $run_id and grain = 'side'
),

final as (
    select
        run_id,
        iteration,
        side,
        calls,
        errors,
        error_rate,
        calls_per_s,
        slow_calls,
        avg_ms,
        p50_ms,
        p90_ms,
        p95_ms,
        p99_ms,
        min_ms,
        max_ms
    from stats
)

select * from final order by iteration, side
