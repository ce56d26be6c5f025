-- Report query: the per-iteration table of the report, each host then all hosts of a side; a background
-- load's own requests have their own table (report_background_stats), never in this one.
-- grain: one row per (iteration, side, host), host '(all)' for the side's summary
-- upstream: iteration_stats, iteration_summary
with rows as (
    select iteration, side, host, calls, errors, error_rate, calls_per_s, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms,
        max_ms
    from iteration_stats
    where run_id = $run_id and side <> 'background'
    union all
    select iteration, side, '(all)' as host, calls, errors, error_rate, calls_per_s, avg_ms, p50_ms, p90_ms, p95_ms,
        p99_ms, max_ms
    from iteration_summary
    where run_id = $run_id and side <> 'background'
)

select * from rows order by iteration, side, host = '(all)', host
