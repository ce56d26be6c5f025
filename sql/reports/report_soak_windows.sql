-- Report query: a soak's figures per window (iteration) and scope, for its trend charts: the request metrics
-- per side and host (iteration_stats), the old generation after GC per JVM (jvm_iteration_stats), each at the
-- middle of the window after its warm-up, as soak_drift fits them. No rows for a run that is no soak.
-- grain: one row per (iteration, side, host, subject)
-- upstream: runs, iterations, iteration_stats, jvm_iteration_stats
with soak_windows as (
    select iteration, started_at + to_microseconds((1000000 * (warmup_s + duration_s / 2))::bigint) as middle_at
    from iterations
    where run_id = $run_id
        and exists (select 1 from runs where run_id = $run_id and (manifest -> 'soak' ->> 'window_s') is not null)
),

requests as (
    select iteration, side, host, 'requests' as subject, avg_ms, p95_ms, calls_per_s, error_rate,
        null::double as old_gen_after_gc_kb
    from iteration_stats
    where run_id = $run_id and side in ('client', 'server')
),

jvms as (
    select iteration, 'jvm' as side, host, source_path as subject, old_used_after_gc_min_kb::double as old_gen_after_gc_kb
    from jvm_iteration_stats
    where run_id = $run_id
)

select soak_windows.middle_at, figures.*
from (select * from requests union all by name select * from jvms) as figures
join soak_windows using (iteration)
order by side, host, subject, iteration
