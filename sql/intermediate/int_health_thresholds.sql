-- The thresholds the health findings judge by: the manifest's `thresholds:` map, else these defaults.
-- materialized: table
-- grain: none (one row: the run being built)
-- upstream: runs
with settings as (
    select manifest -> 'thresholds' as given from runs where run_id = $run_id
),

final as (
    select
        -- a host's CPU is saturated in an iteration when idle < cpu_idle_min_pct in >= cpu_busy_share_pct of samples
        coalesce((given ->> 'cpu_idle_min_pct')::double, 10) as cpu_idle_min_pct,
        coalesce((given ->> 'loadgen_cpu_idle_min_pct')::double, (given ->> 'cpu_idle_min_pct')::double, 10)
            as loadgen_cpu_idle_min_pct,
        coalesce((given ->> 'cpu_busy_share_pct')::double, 50) as cpu_busy_share_pct,
        coalesce((given ->> 'cpu_wait_max_pct')::double, 10) as cpu_wait_max_pct,
        coalesce((given ->> 'gc_overhead_max_pct')::double, 5) as gc_overhead_max_pct,
        -- growth per hour in percent of the old generation's capacity / of the container's memory limit
        coalesce((given ->> 'old_gen_growth_max_pct_per_h')::double, 5) as old_gen_growth_max_pct_per_h,
        -- an old generation at or above this share of its capacity at an iteration's end is nearly full
        coalesce((given ->> 'old_gen_full_pct')::double, 90) as old_gen_full_pct,
        coalesce((given ->> 'container_mem_growth_max_pct_per_h')::double, 5) as container_mem_growth_max_pct_per_h,
        -- a trend is judged only over samples that span at least this long
        coalesce((given ->> 'trend_min_span_s')::double, 300) as trend_min_span_s,
        -- network bytes per call may differ from the run's median by at most this factor
        coalesce((given ->> 'net_per_call_max_ratio')::double, 3) as net_per_call_max_ratio,
        -- network, disks and processes (sar, pidstat): the link speed stated for every NIC (virtual NICs tell
        -- sar none), and the share of it one direction may use on average over an iteration
        coalesce((given ->> 'nic_link_gbps')::double, 10) as nic_link_gbps,
        coalesce((given ->> 'nic_busy_max_pct')::double, 80) as nic_busy_max_pct,
        coalesce((given ->> 'disk_util_max_pct')::double, 90) as disk_util_max_pct,
        -- one process's average CPU in percent of all the host's CPUs
        coalesce((given ->> 'process_cpu_max_pct')::double, 90) as process_cpu_max_pct,
        -- growth of a process's threads from an iteration's first sample to its last, in percent
        coalesce((given ->> 'thread_growth_max_pct')::double, 20) as thread_growth_max_pct
    from settings
)

select * from final
