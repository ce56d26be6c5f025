-- Public mart: load of every block device (sar -d, or procfs's /proc/diskstats) of every host, for the whole
-- run (iteration NULL) and for each iteration it has samples in; samples are placed as in host_network_stats. await_ms_avg is the mean
-- wait of one I/O: each sample's await weighted by its transfers (a quiet second's await says little).
-- sar -d gives transfers (reads and writes together) and bytes read and written per second, not reads and
-- writes per second apart. samples counts the samples with a rate, as in host_network_stats.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host, disk, iteration -- iteration NULL for the whole run
-- upstream: host_sample_facts, host_metric_sources
with samples as (
    select facts.*, sources.host, sources.role
    from host_sample_facts as facts
    join host_metric_sources as sources using (source_key)
    where sources.run_id = $run_id and sources.kind in ('sar', 'procfs') and facts.disk is not null
),

per_span as (
    select
        host,
        disk,
        iteration,
        any_value(role) as role,
        count(disk_transfers_per_s) as samples,
        avg(disk_util_pct) as util_pct_avg,
        max(disk_util_pct) as util_pct_max,
        sum(disk_await_ms * disk_transfers_per_s) / nullif(sum(disk_transfers_per_s), 0) as await_ms_avg,
        max(disk_await_ms) as await_ms_max,
        avg(disk_transfers_per_s) as transfers_per_s,
        avg(disk_read_bytes_per_s) as read_bytes_per_s,
        avg(disk_write_bytes_per_s) as write_bytes_per_s,
        avg(disk_queue_size) as queue_size_avg,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from samples
    group by grouping sets ((host, disk), (host, disk, iteration))
    having grouping(iteration) = 1 or iteration is not null
),

final as (
    select
        $run_id as run_id,
        host,
        role,
        disk,
        iteration,
        samples,
        util_pct_avg,
        util_pct_max,
        await_ms_avg,
        await_ms_max,
        transfers_per_s,
        read_bytes_per_s,
        write_bytes_per_s,
        queue_size_avg,
        first_sampled_at,
        last_sampled_at
    from per_span
)

select * from final order by host, disk, iteration nulls first
