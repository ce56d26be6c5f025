-- Report query: a background load's own requests per iteration and host (side `background`), kept apart
-- from the tested operation's figures (the iterations table leaves them out).
-- grain: one row per (iteration, host)
-- upstream: iteration_stats
select iteration, host, calls, errors, error_rate, calls_per_s, avg_ms, p95_ms, max_ms
from iteration_stats
where run_id = $run_id and side = 'background'
order by iteration, host
