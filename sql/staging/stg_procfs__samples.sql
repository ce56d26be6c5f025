-- procfs samples as host samples: the /proc counters of one sample minus those of the series' previous sample,
-- per second between their times, named as sar and pidstat name them (so host_network_stats, host_disk_stats
-- and process_stats read both). A series is an interface, a disk, or a process: pid AND its start time, so a
-- restarted process (new pid, or a reused pid with a new start) starts a new series and is never subtracted
-- from the old one. A counter that went down (reset, wrap) counts from 0 over that interval (counter_increase):
-- never a negative rate. The first sample of a series has no rates (NULL); its gauges (threads, RSS) stand.
-- Rates are placed at the end of their interval, as sar and pidstat place theirs.
-- materialized: table -- $clk_tck, $cpu_count and $mem_total_kb are bound parameters, which a view cannot hold
-- grain: line_no -- one row per interface, disk or process line
-- upstream: raw_procfs, counter_increase
-- raw_procfs: view made by tasks/warehouse/sources/procfs.py: counters as /proc holds them (disk sectors of 512
-- bytes, times in ms, CPU in clock ticks, RSS and VSZ in kB), threads and memory from /proc/PID/status.
-- $clk_tck, $cpu_count, $mem_total_kb: the file's `## procfs` first line (getconf, /proc/meminfo).
with raw as (
    select * from raw_procfs
),

stepped as (
    select
        raw.*,
        epoch(sampled_at) - epoch(lag(sampled_at) over series) as seconds,
        counter_increase(rx_bytes, lag(rx_bytes) over series) as rx_bytes_step,
        counter_increase(tx_bytes, lag(tx_bytes) over series) as tx_bytes_step,
        counter_increase(rx_packets, lag(rx_packets) over series) as rx_packets_step,
        counter_increase(tx_packets, lag(tx_packets) over series) as tx_packets_step,
        counter_increase(reads, lag(reads) over series) as reads_step,
        counter_increase(writes, lag(writes) over series) as writes_step,
        counter_increase(read_sectors, lag(read_sectors) over series) as read_sectors_step,
        counter_increase(write_sectors, lag(write_sectors) over series) as write_sectors_step,
        counter_increase(read_ms, lag(read_ms) over series) as read_ms_step,
        counter_increase(write_ms, lag(write_ms) over series) as write_ms_step,
        counter_increase(io_ms, lag(io_ms) over series) as io_ms_step,
        counter_increase(weighted_io_ms, lag(weighted_io_ms) over series) as weighted_io_ms_step,
        counter_increase(user_ticks, lag(user_ticks) over series) as user_ticks_step,
        counter_increase(system_ticks, lag(system_ticks) over series) as system_ticks_step,
        counter_increase(minor_faults, lag(minor_faults) over series) as minor_faults_step,
        counter_increase(major_faults, lag(major_faults) over series) as major_faults_step
    from raw
    window series as (partition by interface, disk, pid, start_ticks order by sampled_at, line_no)
),

rated as (
    select
        *,
        nullif(seconds, 0) as per_s_of,
        100.0 / nullif($clk_tck::double, 0) / nullif(seconds, 0) as tick_pct
    from stepped
),

final as (
    select
        line_no,
        sampled_at,
        false as is_since_boot,
        $cpu_count::integer as cpu_count,
        interface,
        rx_packets_step / per_s_of as rx_packets_per_s,
        tx_packets_step / per_s_of as tx_packets_per_s,
        rx_bytes_step / per_s_of as rx_bytes_per_s,
        tx_bytes_step / per_s_of as tx_bytes_per_s,
        null::double as if_util_pct,
        disk,
        (reads_step + writes_step) / per_s_of as disk_transfers_per_s,
        read_sectors_step * 512 / per_s_of as disk_read_bytes_per_s,
        write_sectors_step * 512 / per_s_of as disk_write_bytes_per_s,
        weighted_io_ms_step / 1000 / per_s_of as disk_queue_size,
        (read_ms_step + write_ms_step) / nullif(reads_step + writes_step, 0) as disk_await_ms,
        least(100, io_ms_step / 10 / per_s_of) as disk_util_pct,
        command,
        pid,
        null::bigint as tid,
        user_ticks_step * tick_pct as process_cpu_user_pct,
        system_ticks_step * tick_pct as process_cpu_system_pct,
        (user_ticks_step + system_ticks_step) * tick_pct as cpu_pct,
        minor_faults_step / per_s_of as minor_faults_per_s,
        major_faults_step / per_s_of as major_faults_per_s,
        vsz_kb,
        rss_kb,
        100 * rss_kb / nullif($mem_total_kb::double, 0) as mem_pct,
        threads::bigint as threads
    from rated
)

select * from final
