-- Report query: calls per iteration, server and HTTP status (server side; the client side when there is none).
-- `slow_calls`: the calls at or over `slow_call_ms` (the manifest's thresholds.slow_call_ms).
-- grain: one row per (iteration, side, host, status_code)
-- upstream: iteration_status_stats
select iteration, side, host, status_code, calls, calls_per_s, slow_calls, slow_call_ms, avg_ms, p95_ms, max_ms
from iteration_status_stats
where run_id = $run_id
order by iteration, side desc, host, status_code
