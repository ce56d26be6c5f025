-- Report query: the timed samples behind the host charts: CPU (vmstat), heap and GC (jstat), container
-- memory and network (docker stats), interface traffic (sar, procfs: subject = interface; disks are left to the
-- host_disk_stats table), CPU and threads per process (pidstat process lines, procfs: subject = `command pid`).
-- The since-boot vmstat row, untimed samples and pidstat's thread lines are left out.
-- grain: one row per sample
-- upstream: host_samples
select
    kind,
    host,
    role,
    coalesce(container, interface, command || ' ' || pid, source_path) as subject,
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
    net_out_bytes,
    rx_bytes_per_s,
    tx_bytes_per_s,
    cpu_pct,
    threads
from host_samples
where
    run_id = $run_id and sampled_at is not null and not coalesce(is_since_boot, false)
    and disk is null and tid is null
order by kind, host, subject, sampled_at
