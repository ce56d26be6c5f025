-- Report query: a soak's resources per host over its windows (samples of every window, warm-ups included as
-- in the host marts): CPU busy (user + system) on average and at most, the least free memory and the disk
-- blocks in and out per second (vmstat); the busiest disk's utilisation and the bytes read and written per
-- second over all disks (sar -d, procfs); the bytes received and sent per second over all interfaces (sar -n
-- DEV, procfs; loopback included: on a one-machine stage the calls travel there). No row for a run that is
-- no soak.
-- grain: one row per host
-- upstream: runs, iterations, host_samples
with samples as (
    select *
    from host_samples
    where run_id = $run_id and iteration is not null and not coalesce(is_since_boot, false)
        and exists (select 1 from runs where run_id = $run_id and (manifest -> 'soak' ->> 'window_s') is not null)
),

hosts as (
    select
        host,
        min(role) as role,
        count(*) filter (where kind = 'vmstat') as samples,
        avg(cpu_user_pct + cpu_system_pct) filter (where kind = 'vmstat') as cpu_busy_avg_pct,
        max(cpu_user_pct + cpu_system_pct) filter (where kind = 'vmstat') as cpu_busy_max_pct,
        min(mem_free_kb) filter (where kind = 'vmstat') as mem_free_min_kb,
        avg(blocks_in_per_s) filter (where kind = 'vmstat') as blocks_in_per_s,
        avg(blocks_out_per_s) filter (where kind = 'vmstat') as blocks_out_per_s,
        max(disk_util_pct) as disk_util_max_pct
    from samples
    group by host
),

-- a rate over several devices: each device's average over the soak, added up
disks as (
    select host, sum(read_bytes_per_s) as disk_read_bytes_per_s, sum(write_bytes_per_s) as disk_write_bytes_per_s
    from (
        select host, disk, avg(disk_read_bytes_per_s) as read_bytes_per_s, avg(disk_write_bytes_per_s) as write_bytes_per_s
        from samples
        where disk is not null
        group by host, disk
    )
    group by host
),

interfaces as (
    select host, sum(rx_bytes_per_s) as net_rx_bytes_per_s, sum(tx_bytes_per_s) as net_tx_bytes_per_s
    from (
        select host, interface, avg(rx_bytes_per_s) as rx_bytes_per_s, avg(tx_bytes_per_s) as tx_bytes_per_s
        from samples
        where interface is not null and rx_bytes_per_s is not null
        group by host, interface
    )
    group by host
),

final as (
    select hosts.*, disks.disk_read_bytes_per_s, disks.disk_write_bytes_per_s, interfaces.net_rx_bytes_per_s,
        interfaces.net_tx_bytes_per_s
    from hosts
    left join disks using (host)
    left join interfaces using (host)
    where hosts.samples > 0 or disks.host is not null or interfaces.host is not null
)

select * from final order by host
