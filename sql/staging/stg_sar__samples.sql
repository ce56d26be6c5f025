-- sar samples as host samples: one row per interface (sar -n DEV) or block device (sar -d) per interval.
-- materialized: table -- $cpu_count is a bound parameter, which a view cannot hold
-- grain: line_no -- one row per sar data line
-- upstream: raw_sar
-- raw_sar: view made by tasks/warehouse/sources/sar.py: values by sar's column names, in sar's units (kB =
-- 1024 bytes, sectors = 512 bytes), sampled_at from the first line's date and the line's time (UTC).
-- $cpu_count: the host's CPUs from sar's first line.
with raw as (
    select * from raw_sar
),

final as (
    select
        line_no,
        sampled_at,
        false as is_since_boot,
        $cpu_count::integer as cpu_count,
        interface,
        rx_packets_per_s,
        tx_packets_per_s,
        rx_kb_per_s * 1024 as rx_bytes_per_s,
        tx_kb_per_s * 1024 as tx_bytes_per_s,
        if_util_pct,
        disk,
        transfers_per_s as disk_transfers_per_s,
        coalesce(read_kb_per_s * 1024, read_sectors_per_s * 512) as disk_read_bytes_per_s,
        coalesce(write_kb_per_s * 1024, write_sectors_per_s * 512) as disk_write_bytes_per_s,
        queue_size as disk_queue_size,
        await_ms as disk_await_ms,
        util_pct as disk_util_pct
    from raw
)

select * from final
