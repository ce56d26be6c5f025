-- Health findings, disk rule (`disk_wait`): average I/O wait of each host in each iteration.
-- materialized: table
-- grain: host, subject, rule, iteration
-- upstream: int_health_thresholds, host_iteration_stats
with thresholds as (
    select * from int_health_thresholds
),

host_stats as (
    select * from host_iteration_stats where run_id = $run_id and samples > 0
),

disk_findings as (
    select
        host_stats.host,
        'vmstat' as subject,
        'disk_wait' as rule,
        'disk' as area,
        host_stats.iteration,
        case when host_stats.cpu_wait_avg > thresholds.cpu_wait_max_pct then 'warn' else 'ok' end as severity,
        case
            when host_stats.cpu_wait_avg > thresholds.cpu_wait_max_pct then printf(
                '%s waited for I/O %.1f %% of the time on average in iteration %d (more than %g %%): %.0f blocks '
                || 'in and %.0f out per second.', host_stats.host, host_stats.cpu_wait_avg, host_stats.iteration,
                thresholds.cpu_wait_max_pct, host_stats.blocks_in_per_s, host_stats.blocks_out_per_s)
            else printf('I/O wait on %s stayed low in iteration %d (%.1f %% on average).',
                host_stats.host, host_stats.iteration, host_stats.cpu_wait_avg)
        end as finding,
        json_object(
            'cpu_wait_avg', round(host_stats.cpu_wait_avg, 2), 'cpu_wait_max_pct', thresholds.cpu_wait_max_pct,
            'blocks_in_per_s', round(host_stats.blocks_in_per_s, 2),
            'blocks_out_per_s', round(host_stats.blocks_out_per_s, 2)
        ) as evidence
    from host_stats
    cross join thresholds
    where host_stats.cpu_wait_avg is not null
),

final as (
    select * from disk_findings
)

select * from final
