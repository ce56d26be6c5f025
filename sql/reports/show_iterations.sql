-- Report query behind `perfcampaign show RUN_ID`: the per-iteration table, one line per side (and host).
-- Short column names keep it inside an 80-column terminal; times are in ms (said in the title).
select
    stats.iteration as it,
    load_text(iterations.load) as load,
    stats.side,
    coalesce(stats.host, '(all)') as host,
    stats.calls,
    stats.errors as err,
    round(100 * stats.error_rate, 2) as "err %",
    round(stats.calls_per_s, 1) as "calls/s",
    round(stats.avg_ms, 1) as avg,
    round(stats.p50_ms, 1) as p50,
    round(stats.p90_ms, 1) as p90,
    round(stats.p95_ms, 1) as p95,
    round(stats.p99_ms, 1) as p99,
    round(stats.max_ms, 1) as max
from (
    select run_id, iteration, side, host, calls, errors, error_rate, calls_per_s, avg_ms, p50_ms, p90_ms, p95_ms,
        p99_ms, max_ms
    from iteration_stats
    union all
    select run_id, iteration, side, null as host, calls, errors, error_rate, calls_per_s, avg_ms, p50_ms, p90_ms,
        p95_ms, p99_ms, max_ms
    from iteration_summary
) as stats
join iterations using (run_id, iteration)
where stats.run_id = $run_id
order by stats.iteration, stats.side, stats.host nulls last
