-- Public mart: traffic of every network interface (sar -n DEV, or the procfs monitor's /proc/net/dev) of every
-- host, for the whole run (iteration NULL) and for each iteration it has samples in. A sample is sar's average over the interval that ends at
-- its time, placed in the iteration of that time (as every host sample is; warm-up included, as for vmstat),
-- so an iteration's figure is the average of its samples' rates. Gbps = bytes/s x 8 / 1e9 (decimal, as
-- link speeds are stated); sar's kB are 1024 bytes. samples counts the samples with a rate (a procfs series'
-- first sample has none: stg_procfs__samples).
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host, interface, iteration -- iteration NULL for the whole run
-- upstream: host_sample_facts, host_metric_sources
with samples as (
    select facts.*, sources.host, sources.role
    from host_sample_facts as facts
    join host_metric_sources as sources using (source_key)
    where sources.run_id = $run_id and sources.kind in ('sar', 'procfs') and facts.interface is not null
),

per_span as (
    select
        host,
        interface,
        iteration,
        any_value(role) as role,
        count(rx_bytes_per_s) as samples,
        avg(rx_bytes_per_s) as rx_bytes_per_s,
        avg(tx_bytes_per_s) as tx_bytes_per_s,
        max(rx_bytes_per_s) as rx_bytes_per_s_max,
        max(tx_bytes_per_s) as tx_bytes_per_s_max,
        avg(rx_packets_per_s) as rx_packets_per_s,
        avg(tx_packets_per_s) as tx_packets_per_s,
        max(if_util_pct) as if_util_pct_max,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from samples
    group by grouping sets ((host, interface), (host, interface, iteration))
    having grouping(iteration) = 1 or iteration is not null
),

final as (
    select
        $run_id as run_id,
        host,
        role,
        interface,
        iteration,
        samples,
        rx_bytes_per_s,
        tx_bytes_per_s,
        rx_bytes_per_s * 8 / 1e9 as rx_gbps,
        tx_bytes_per_s * 8 / 1e9 as tx_gbps,
        rx_bytes_per_s_max * 8 / 1e9 as rx_gbps_max,
        tx_bytes_per_s_max * 8 / 1e9 as tx_gbps_max,
        rx_packets_per_s,
        tx_packets_per_s,
        if_util_pct_max,
        first_sampled_at,
        last_sampled_at
    from per_span
)

select * from final order by host, interface, iteration nulls first
