-- Health findings, memory rules: swapping (`swap`), the old generation after GCs over the whole run
-- (`old_gen_trend`), an old generation nearly full or on course to fill within the run's length in an
-- iteration (`old_gen_fill`), and containers whose memory rises and whether the JVM's heap explains it
-- (`container_memory_trend`). A whole-run trend reads every sample; an iteration's rule leaves its warm-up out.
-- materialized: table
-- grain: host, subject, rule, iteration -- iteration NULL for a whole-run trend
-- upstream: int_health_thresholds, host_metric_sources, int_host_samples, host_iteration_stats, iterations,
--           jvm_iteration_stats, container_stats
with thresholds as (
    select * from int_health_thresholds
),

metric_sources as (
    select * from host_metric_sources where run_id = $run_id
),

samples as (
    select * from int_host_samples where not is_since_boot
),

host_stats as (
    select * from host_iteration_stats where run_id = $run_id and samples > 0
),

jvm_stats as (
    select * from jvm_iteration_stats where run_id = $run_id and samples > 0
),

containers as (
    select * from container_stats where run_id = $run_id
),

run_span as (
    select epoch(max(ended_at)) - epoch(min(started_at)) as run_s from iterations where run_id = $run_id
),

swap_findings as (
    select
        host,
        'vmstat' as subject,
        'swap' as rule,
        'memory' as area,
        iteration,
        case when swap_in_kb_per_s + swap_out_kb_per_s > 0 then 'warn' else 'ok' end as severity,
        case
            when swap_in_kb_per_s + swap_out_kb_per_s > 0 then printf(
                '%s swapped in iteration %d (%.1f KiB/s in, %.1f KiB/s out on average): it is short of memory.',
                host, iteration, swap_in_kb_per_s, swap_out_kb_per_s)
            else printf('%s did not swap in iteration %d (lowest free memory %d KiB).', host, iteration,
                mem_free_min_kb)
        end as finding,
        json_object(
            'swap_in_kb_per_s', round(swap_in_kb_per_s, 2), 'swap_out_kb_per_s', round(swap_out_kb_per_s, 2),
            'mem_free_min_kb', mem_free_min_kb
        ) as evidence
    from host_stats
    where swap_in_kb_per_s is not null and swap_out_kb_per_s is not null
),

-- memory: old generation after GCs over the whole run -----------------------------------------------------------
-- After a GC that left the old generation no bigger (it was collected, or nothing was promoted): what is
-- there is live or leaked. After a young GC that promoted objects it has only grown, so a healthy JVM whose
-- old generation is not collected during the run would look like a leak.
after_gc as (
    select host, source_path, sampled_at, old_used_kb, old_capacity_kb
    from (
        select
            *,
            gc_count_since_previous > 0
                and old_used_kb <= lag(old_used_kb) over (partition by host, source_path order by line_no)
                as old_collected
        from samples
        where kind = 'jstat' and sampled_at is not null and old_used_kb is not null
    )
    where old_collected
),

old_trend as (
    select
        metric_sources.host,
        metric_sources.path as source_path,
        count(after_gc.sampled_at) as points,
        regr_slope(after_gc.old_used_kb, epoch(after_gc.sampled_at)) * 3600 as slope_kb_per_h,
        max(after_gc.old_capacity_kb) as capacity_kb,
        coalesce(epoch(max(after_gc.sampled_at)) - epoch(min(after_gc.sampled_at)), 0) as span_s,
        arg_min(after_gc.old_used_kb, after_gc.sampled_at) as first_kb,
        arg_max(after_gc.old_used_kb, after_gc.sampled_at) as last_kb
    from metric_sources
    left join after_gc on after_gc.source_path = metric_sources.path and after_gc.host = metric_sources.host
    where metric_sources.kind = 'jstat'
    group by metric_sources.host, metric_sources.path
),

old_trend_judged as (
    select
        old_trend.*,
        100 * slope_kb_per_h / nullif(capacity_kb, 0) as pct_per_h,
        points >= 3 and span_s >= thresholds.trend_min_span_s and capacity_kb > 0 as is_judged,
        thresholds.old_gen_growth_max_pct_per_h as max_pct_per_h,
        thresholds.trend_min_span_s,
        (
            select list(jvm_stats.old_used_after_gc_min_kb order by jvm_stats.iteration)
            from jvm_stats
            where jvm_stats.source_path = old_trend.source_path and jvm_stats.host = old_trend.host
        ) as after_gc_min_kb_by_iteration
    from old_trend
    cross join thresholds
),

old_trend_findings as (
    select
        host,
        source_path as subject,
        'old_gen_trend' as rule,
        'memory' as area,
        null::integer as iteration,
        case when is_judged and pct_per_h > max_pct_per_h then 'warn' else 'ok' end as severity,
        case
            when is_judged and pct_per_h > max_pct_per_h then printf(
                'The old generation of %s keeps growing after its collections: +%.0f KB/h (%.1f %% of its %.0f KB capacity per '
                || 'hour) over %.0f min, from %.0f KB to %.0f KB. A leak or an unbounded cache is likely.',
                host, slope_kb_per_h, pct_per_h, capacity_kb, span_s / 60, first_kb, last_kb)
            when is_judged then printf(
                'The old generation of %s stays flat after its collections (%+.1f %% of its capacity per hour over %.0f min).',
                host, pct_per_h, span_s / 60)
            else printf(
                'The old generation trend of %s was not judged: %d samples after a GC that left it no bigger over '
                || '%.0f s (at least 3 over %g s are needed; it was not collected during the run?).', host, points,
                span_s, trend_min_span_s)
        end as finding,
        json_object(
            'after_gc_samples', points, 'span_s', round(span_s, 1), 'slope_kb_per_h', round(slope_kb_per_h, 1),
            'pct_of_capacity_per_h', round(pct_per_h, 3), 'old_gen_growth_max_pct_per_h', max_pct_per_h,
            'old_capacity_kb', capacity_kb, 'old_used_after_gc_min_kb_by_iteration', after_gc_min_kb_by_iteration
        ) as evidence
    from old_trend_judged
),

-- memory: an old generation nearly full at an iteration's end, or filling fast enough to be full within the
-- run's length at the growth seen in the iteration (samples in the iteration, first to last). Unlike the trend
-- above it reads every sample: promoted garbage fills the old generation as surely as a leak, and a full GC is
-- near either way; which of the two it is needs a run long enough to see the old generation collected.
old_fill as (
    select
        host,
        source_path,
        iteration,
        arg_min(old_used_kb, line_no) as start_kb,
        arg_max(old_used_kb, line_no) as end_kb,
        arg_max(old_capacity_kb, line_no) as capacity_kb,
        epoch(max(sampled_at)) - epoch(min(sampled_at)) as span_s
    from samples
    where kind = 'jstat' and iteration is not null and not is_warmup and sampled_at is not null and old_used_kb is not null
    group by host, source_path, iteration
),

old_fill_judged as (
    select
        old_fill.*,
        100 * end_kb / nullif(capacity_kb, 0) as end_pct,
        (end_kb - start_kb) / nullif(span_s, 0) as growth_kb_per_s,
        case when end_kb > start_kb and span_s > 0 and capacity_kb > end_kb
            then (capacity_kb - end_kb) / ((end_kb - start_kb) / span_s) end as fill_in_s,
        run_span.run_s,
        thresholds.old_gen_full_pct
    from old_fill
    cross join thresholds
    cross join run_span
    where capacity_kb > 0
),

old_fill_findings as (
    select
        host,
        source_path as subject,
        'old_gen_fill' as rule,
        'memory' as area,
        iteration,
        case when end_pct >= old_gen_full_pct or fill_in_s <= run_s then 'warn' else 'ok' end as severity,
        case
            when end_pct >= old_gen_full_pct or fill_in_s <= run_s then printf(
                'The old generation of %s ends iteration %d at %.0f KB, %.1f %% of its %.0f KB capacity (from %.0f KB, '
                || '%+.0f KB/s)', host, iteration, end_kb, end_pct, capacity_kb, start_kb, growth_kb_per_s)
                || case when fill_in_s <= run_s then printf(
                    ': at that growth it is full in %.0f s, within the run''s length (%.0f s)', fill_in_s, run_s)
                    else '' end
                || '. A full GC is near. A longer run is needed to tell a leak from promotion.'
            else printf('The old generation of %s ends iteration %d at %.1f %% of its capacity%s.', host, iteration,
                end_pct, case when fill_in_s is not null then printf(' (full in %.0f s at its growth, longer than the '
                || 'run''s %.0f s)', fill_in_s, run_s) else '' end)
        end as finding,
        json_object(
            'old_used_start_kb', start_kb, 'old_used_end_kb', end_kb, 'old_capacity_kb', capacity_kb,
            'old_used_end_pct', round(end_pct, 2), 'old_gen_full_pct', old_gen_full_pct,
            'growth_kb_per_s', round(growth_kb_per_s, 3), 'full_in_s', round(fill_in_s, 1), 'run_s', round(run_s, 1)
        ) as evidence
    from old_fill_judged
),

-- memory: containers whose memory rises, and whether the JVM's heap explains it ---------------------------------
jvm_heap_by_host as (
    select
        host,
        bool_or(is_judged and pct_per_h > max_pct_per_h) as is_rising,
        bool_and(is_judged and pct_per_h <= max_pct_per_h) as is_flat,
        max(pct_per_h) as pct_per_h
    from old_trend_judged
    group by host
),

container_trend as (
    select
        containers.host,
        containers.container,
        containers.timed_samples,
        containers.mem_trend_bytes_per_h,
        containers.mem_limit_bytes,
        100 * containers.mem_trend_bytes_per_h / nullif(containers.mem_limit_bytes, 0) as pct_per_h,
        coalesce(epoch(containers.last_sampled_at) - epoch(containers.first_sampled_at), 0) as span_s,
        containers.timed_samples >= 3
            and coalesce(epoch(containers.last_sampled_at) - epoch(containers.first_sampled_at), 0)
                >= thresholds.trend_min_span_s
            and containers.mem_limit_bytes > 0 as is_judged,
        thresholds.container_mem_growth_max_pct_per_h as max_pct_per_h,
        thresholds.trend_min_span_s,
        jvm_heap_by_host.is_rising as jvm_is_rising,
        jvm_heap_by_host.is_flat as jvm_is_flat,
        jvm_heap_by_host.pct_per_h as jvm_pct_per_h
    from containers
    cross join thresholds
    left join jvm_heap_by_host using (host)
    where containers.iteration is null and containers.timed_samples > 0
),

container_trend_findings as (
    select
        host,
        container as subject,
        'container_memory_trend' as rule,
        'memory' as area,
        null::integer as iteration,
        case when is_judged and pct_per_h > max_pct_per_h then 'warn' else 'ok' end as severity,
        case
            when is_judged and pct_per_h > max_pct_per_h then printf(
                'Memory of container %s on %s rises by %.1f MiB/h (%.1f %% of its limit per hour)', container, host,
                mem_trend_bytes_per_h / 1048576, pct_per_h)
                || case
                    when jvm_is_flat then ' while the JVM''s old generation stays flat: the growth is outside the '
                        || 'Java heap (native memory, threads, direct buffers or page cache), not the application''s '
                        || 'objects.'
                    when jvm_is_rising then ', and the JVM''s old generation grows too (see old_gen_trend).'
                    else '.'
                end
            when is_judged then printf('Memory of container %s on %s is flat (%+.1f %% of its limit per hour).',
                container, host, pct_per_h)
            else printf(
                'The memory trend of container %s on %s was not judged: %d timed samples over %.0f s (at least 3 '
                || 'over %g s are needed).', container, host, timed_samples, span_s, trend_min_span_s)
        end as finding,
        json_object(
            'mem_trend_bytes_per_h', round(mem_trend_bytes_per_h, 0), 'mem_limit_bytes', mem_limit_bytes,
            'pct_of_limit_per_h', round(pct_per_h, 3), 'container_mem_growth_max_pct_per_h', max_pct_per_h,
            'span_s', round(span_s, 1), 'jvm_old_gen_pct_of_capacity_per_h', round(jvm_pct_per_h, 3)
        ) as evidence
    from container_trend
),

final as (
    select * from swap_findings
    union all by name select * from old_trend_findings
    union all by name select * from old_fill_findings
    union all by name select * from container_trend_findings
)

select * from final
