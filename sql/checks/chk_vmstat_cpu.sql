-- Data expectations on vmstat: the CPU columns of every sample add up to about 100 %. procps rounds each
-- column to a whole percent, so with up to six columns (us sy id wa st gu) the sum is 100 +- 3.
-- grain: one row per vmstat sample
-- upstream: host_sample_facts, host_metric_sources
with vmstat_sources as (
    select source_key, host, path as source_path
    from host_metric_sources
    where run_id = $run_id and kind = 'vmstat'
),

final as (
    select
        vmstat_sources.host,
        vmstat_sources.source_path,
        samples.line_no,
        samples.sampled_at,
        samples.cpu_user_pct + samples.cpu_system_pct + samples.cpu_idle_pct + samples.cpu_wait_pct
            + coalesce(samples.cpu_steal_pct, 0) + coalesce(samples.cpu_guest_pct, 0) as cpu_total_pct
    from host_sample_facts as samples
    join vmstat_sources using (source_key)
    where samples.run_id = $run_id
)

select * from final order by source_path, line_no
