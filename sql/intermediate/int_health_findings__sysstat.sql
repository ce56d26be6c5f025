-- Health findings of sar, pidstat and procfs (their marts), per iteration: `nic_busy` (area network) when an
-- interface moves more than nic_busy_max_pct of the stated link speed (nic_link_gbps) in one direction on
-- average (loopback `lo` is no NIC and is not judged); `disk_busy` (area disk) when a disk is busy (util) more
-- than disk_util_max_pct of the time on average; `process_cpu` (area cpu) when one process uses more than
-- process_cpu_max_pct of all the host's CPUs on average; `thread_growth` (area memory) when a process ends an
-- iteration with more than thread_growth_max_pct more threads than it began it with.
-- materialized: table
-- grain: host, subject, rule, iteration -- subject: the interface, the disk, or `command pid`
-- upstream: int_health_thresholds, host_network_stats, host_disk_stats, process_stats
with thresholds as (
    select * from int_health_thresholds
),

nics as (
    select * from host_network_stats where run_id = $run_id and iteration is not null and interface <> 'lo'
),

disks as (
    select * from host_disk_stats where run_id = $run_id and iteration is not null and util_pct_avg is not null
),

processes as (
    select * from process_stats where run_id = $run_id and iteration is not null
),

nic_findings as (
    select
        nics.host,
        nics.interface as subject,
        'nic_busy' as rule,
        'network' as area,
        nics.iteration,
        100 * greatest(nics.rx_gbps, nics.tx_gbps) / thresholds.nic_link_gbps as busy_pct,
        case when busy_pct > thresholds.nic_busy_max_pct then 'warn' else 'ok' end as severity,
        printf('%s %s moved %.3f Gbps in and %.3f Gbps out on average in iteration %d: %.1f %% of its %g Gbps link%s.',
            nics.host, nics.interface, nics.rx_gbps, nics.tx_gbps, nics.iteration, busy_pct, thresholds.nic_link_gbps,
            case when busy_pct > thresholds.nic_busy_max_pct
                then printf(' (more than %g %%: the network is saturated)', thresholds.nic_busy_max_pct) else '' end)
            as finding,
        json_object('rx_gbps', round(nics.rx_gbps, 4), 'tx_gbps', round(nics.tx_gbps, 4),
            'nic_link_gbps', thresholds.nic_link_gbps, 'nic_busy_max_pct', thresholds.nic_busy_max_pct,
            'samples', nics.samples) as evidence
    from nics
    cross join thresholds
),

disk_findings as (
    select
        disks.host,
        disks.disk as subject,
        'disk_busy' as rule,
        'disk' as area,
        disks.iteration,
        case when disks.util_pct_avg > thresholds.disk_util_max_pct then 'warn' else 'ok' end as severity,
        printf('Disk %s of %s was busy %.1f %% of the time on average in iteration %d%s (I/O wait %.2f ms, '
            || '%.0f kB/s read, %.0f kB/s written).', disks.disk, disks.host, disks.util_pct_avg, disks.iteration,
            case when disks.util_pct_avg > thresholds.disk_util_max_pct
                then printf(' (more than %g %%: saturated)', thresholds.disk_util_max_pct) else '' end,
            coalesce(disks.await_ms_avg, 0), disks.read_bytes_per_s / 1024, disks.write_bytes_per_s / 1024) as finding,
        json_object('util_pct_avg', round(disks.util_pct_avg, 2), 'util_pct_max', disks.util_pct_max,
            'await_ms_avg', round(disks.await_ms_avg, 3), 'disk_util_max_pct', thresholds.disk_util_max_pct,
            'samples', disks.samples) as evidence
    from disks
    cross join thresholds
),

cpu_findings as (
    select
        processes.host,
        processes.command || ' ' || processes.pid as subject,
        'process_cpu' as rule,
        'cpu' as area,
        processes.iteration,
        case when processes.cpu_share_pct_avg > thresholds.process_cpu_max_pct then 'warn' else 'ok' end as severity,
        printf('Process %s (pid %d) on %s used %.1f %% of the host''s %d CPUs on average in iteration %d%s.',
            processes.command, processes.pid, processes.host, processes.cpu_share_pct_avg, processes.cpu_count,
            processes.iteration,
            case when processes.cpu_share_pct_avg > thresholds.process_cpu_max_pct
                then printf(' (more than %g %%: it takes the CPU)', thresholds.process_cpu_max_pct) else '' end)
            as finding,
        json_object('cpu_pct_avg', round(processes.cpu_pct_avg, 2), 'cpu_count', processes.cpu_count,
            'cpu_share_pct_avg', round(processes.cpu_share_pct_avg, 2),
            'process_cpu_max_pct', thresholds.process_cpu_max_pct, 'samples', processes.samples) as evidence
    from processes
    cross join thresholds
    where processes.cpu_share_pct_avg is not null
),

thread_findings as (
    select
        processes.host,
        processes.command || ' ' || processes.pid as subject,
        'thread_growth' as rule,
        'memory' as area,
        processes.iteration,
        100.0 * (processes.threads_last - processes.threads_first) / processes.threads_first as growth_pct,
        case when growth_pct > thresholds.thread_growth_max_pct then 'warn' else 'ok' end as severity,
        printf('Process %s (pid %d) on %s went from %d to %d threads in iteration %d%s.', processes.command,
            processes.pid, processes.host, processes.threads_first, processes.threads_last, processes.iteration,
            case when growth_pct > thresholds.thread_growth_max_pct
                then printf(' (+%.0f %%, more than %g %%: threads keep being created)', growth_pct,
                    thresholds.thread_growth_max_pct) else '' end) as finding,
        json_object('threads_first', processes.threads_first, 'threads_last', processes.threads_last,
            'threads_max', processes.threads_max, 'thread_growth_max_pct', thresholds.thread_growth_max_pct,
            'samples', processes.samples) as evidence
    from processes
    cross join thresholds
    where processes.threads_first > 0
),

final as (
    select host, subject, rule, area, iteration, severity, finding, evidence from nic_findings
    union all select host, subject, rule, area, iteration, severity, finding, evidence from disk_findings
    union all select host, subject, rule, area, iteration, severity, finding, evidence from cpu_findings
    union all select host, subject, rule, area, iteration, severity, finding, evidence from thread_findings
)

select * from final
