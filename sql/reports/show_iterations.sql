-- Report query behind `perfcampaign show RUN_ID`: the per-iteration table, one line per side (and host).
-- Short column names keep it narrow; times are in ms (said in the title), to three significant digits under
-- 10 ms (round_ms). `slow`: the calls at or over the manifest's thresholds.slow_call_ms.
select
    stats.iteration as it,
    load_text(iterations.load) as load,
    stats.side,
    coalesce(stats.host, '(all)') as host,
    stats.calls,
    stats.errors as err,
    round(100 * stats.error_rate, 2) as "err %",
    round(stats.calls_per_s, 1) as "calls/s",
    round_ms(stats.avg_ms) as avg,
    round_ms(stats.p50_ms) as p50,
    round_ms(stats.p90_ms) as p90,
    round_ms(stats.p95_ms) as p95,
    round_ms(stats.p99_ms) as p99,
    round_ms(stats.max_ms) as max,
    stats.slow_calls as slow
from (
    select run_id, iteration, side, host, calls, errors, error_rate, calls_per_s, avg_ms, p50_ms, p90_ms, p95_ms,
        p99_ms, max_ms, slow_calls
    from iteration_stats
    union all
    select run_id, iteration, side, null as host, calls, errors, error_rate, calls_per_s, avg_ms, p50_ms, p90_ms,
        p95_ms, p99_ms, max_ms, slow_calls
    from iteration_summary
) as stats
join iterations using (run_id, iteration)
where stats.run_id = $run_id
order by stats.iteration, stats.side, stats.host nulls last
