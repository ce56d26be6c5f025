-- Health findings, gc rules: GC overhead (`gc_overhead`) and full collections (`full_gc`) of every JVM in
-- each iteration.
-- materialized: table
-- grain: host, subject, rule, iteration
-- upstream: int_health_thresholds, jvm_iteration_stats
with thresholds as (
    select * from int_health_thresholds
),

jvm_stats as (
    select * from jvm_iteration_stats where run_id = $run_id and samples > 0
),

gc_overhead_findings as (
    select
        jvm_stats.host,
        jvm_stats.source_path as subject,
        'gc_overhead' as rule,
        'gc' as area,
        jvm_stats.iteration,
        case when jvm_stats.gc_overhead_pct > thresholds.gc_overhead_max_pct then 'warn' else 'ok' end as severity,
        case
            when jvm_stats.gc_overhead_pct > thresholds.gc_overhead_max_pct then printf(
                'GC on %s took %.1f %% of iteration %d (%.3f s of %.1f s), more than %g %%.',
                jvm_stats.host, jvm_stats.gc_overhead_pct, jvm_stats.iteration, jvm_stats.gc_time_s,
                epoch(jvm_stats.counted_to_at) - epoch(jvm_stats.counted_from_at), thresholds.gc_overhead_max_pct)
            else printf('GC on %s took %.1f %% of iteration %d (%.3f s: %d young GC%s %.3f s, %d full %.3f s, '
                || '%d concurrent cycle%s).', jvm_stats.host, jvm_stats.gc_overhead_pct, jvm_stats.iteration,
                jvm_stats.gc_time_s, coalesce(jvm_stats.young_gc_count, 0),
                case when jvm_stats.young_gc_count = 1 then '' else 's' end, coalesce(jvm_stats.young_gc_time_s, 0),
                coalesce(jvm_stats.full_gc_count, 0), coalesce(jvm_stats.full_gc_time_s, 0),
                coalesce(jvm_stats.concurrent_gc_count, 0),
                case when jvm_stats.concurrent_gc_count = 1 then '' else 's' end)
        end as finding,
        json_object(
            'gc_time_s', round(jvm_stats.gc_time_s, 3), 'gc_overhead_pct', round(jvm_stats.gc_overhead_pct, 3),
            'gc_overhead_max_pct', thresholds.gc_overhead_max_pct, 'young_gc_count', jvm_stats.young_gc_count,
            'full_gc_count', jvm_stats.full_gc_count, 'counted_from_at', jvm_stats.counted_from_at,
            'counted_to_at', jvm_stats.counted_to_at
        ) as evidence
    from jvm_stats
    cross join thresholds
    where jvm_stats.gc_overhead_pct is not null
),

full_gc_findings as (
    select
        host,
        source_path as subject,
        'full_gc' as rule,
        'gc' as area,
        iteration,
        case when full_gc_count > 0 then 'warn' else 'ok' end as severity,
        case
            when full_gc_count > 0 then printf(
                '%d full GC%s on %s in iteration %d (%.3f s): the old generation filled up, or something called '
                || 'System.gc().', full_gc_count, case when full_gc_count > 1 then 's' else '' end, host, iteration,
                coalesce(full_gc_time_s, 0))
            else printf('No full GC on %s in iteration %d.', host, iteration)
        end as finding,
        json_object(
            'full_gc_count', full_gc_count, 'full_gc_time_s', round(full_gc_time_s, 3),
            'old_used_start_kb', old_used_start_kb, 'old_used_end_kb', old_used_end_kb,
            'old_capacity_kb', old_capacity_kb
        ) as evidence
    from jvm_stats
    where full_gc_count is not null
),

final as (
    select * from gc_overhead_findings
    union all by name select * from full_gc_findings
)

select * from final
