-- Report query: the per-minute series of the charts (calls, average, p95 and max response time).
-- grain: one row per (side, host, minute_at)
-- upstream: minute_stats
select side, host, minute_at, iteration, calls, errors, avg_ms, p95_ms, max_ms
from minute_stats
where run_id = $run_id
order by side, host, minute_at
