-- Report query: the timed samples behind the host charts: CPU (vmstat), heap and GC (jstat), container
-- memory and network (docker stats). The since-boot vmstat row and untimed samples are left out.
-- grain: one row per sample
-- upstream: host_samples
select
    kind,
    host,
    role,
    coalesce(container, source_path) as subject,
    sampled_at,
    cpu_user_pct + cpu_system_pct as cpu_busy_pct,
    cpu_wait_pct,
    eden_used_kb + survivor_used_kb as young_used_kb,
    old_used_kb,
    old_capacity_kb,
    gc_time_s,
    mem_used_bytes,
    mem_limit_bytes,
    net_in_bytes,
    net_out_bytes
from host_samples
where run_id = $run_id and sampled_at is not null and not coalesce(is_since_boot, false)
order by kind, host, subject, sampled_at
