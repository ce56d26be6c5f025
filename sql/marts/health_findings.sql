-- Public mart: what the host, JVM and container metrics say about each host in each iteration, as sentences a
-- person would write, with the numbers behind them (evidence, JSON). Every check that can be made gives a row,
-- `ok` included, and every host gets a `data` row for every kind of metrics in every iteration, so every
-- iteration of every host has a finding or an explicit ok. Trends are judged over the whole run (iteration NULL).
-- Thresholds: int_health_thresholds (the manifest's `thresholds:` over defaults).
-- Rules: samples (data), cpu_idle (cpu), loadgen_cpu (loadgen), disk_wait (disk), swap (memory),
--        gc_overhead and full_gc (gc), old_gen_trend, container_memory_trend and container_restart (memory),
--        network_per_call (network).
-- grain: one row per (run_id, host, subject, rule, iteration); subject is the metric kind for `samples`,
--        'vmstat' for host rules, the jstat file for JVM rules, the container for container rules
-- upstream: int_health_thresholds, host_metric_sources, sources, host_samples, host_iteration_stats,
--           jvm_iteration_stats, container_stats, iteration_stats, iteration_summary, iterations
with thresholds as (
    select * from int_health_thresholds
),

iterations as (
    select iteration from iterations where run_id = $run_id
),

metric_sources as (
    select metric_sources.*, loaded.pinned_iteration
    from host_metric_sources as metric_sources
    join sources as loaded using (source_key)
    where metric_sources.run_id = $run_id
),

samples as (
    select * from host_samples where run_id = $run_id and not is_since_boot
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

throughput as (
    -- the load the iteration carried: calls the servers saw (else the clients sent), and the clients' rate
    select
        iteration,
        coalesce(max(calls) filter (where side = 'server'), max(calls) filter (where side = 'client')) as calls,
        coalesce(max(calls_per_s) filter (where side = 'client'), max(calls_per_s) filter (where side = 'server'))
            as calls_per_s
    from iteration_summary
    where run_id = $run_id
    group by iteration
),

-- data: samples of every kind of every host in every iteration ------------------------------------------------
kinds as (
    select
        host,
        kind,
        bool_or(time_basis not like 'none%' or pinned_iteration is not null) as is_placeable,
        count(*) as files
    from metric_sources
    group by host, kind
),

coverage as (
    select kinds.host, kinds.kind, kinds.is_placeable, iterations.iteration, count(samples.line_no) as samples
    from kinds
    cross join iterations
    left join samples
        on samples.host = kinds.host and samples.kind = kinds.kind and samples.iteration = iterations.iteration
    group by kinds.host, kinds.kind, kinds.is_placeable, iterations.iteration
),

coverage_findings as (
    select
        host,
        kind as subject,
        'samples' as rule,
        'data' as area,
        iteration,
        case when samples > 0 then 'ok' else 'warn' end as severity,
        case
            when samples > 0 then printf('%s has %d %s samples in iteration %d.', host, samples, kind, iteration)
            when not is_placeable then printf(
                'The %s samples of %s carry no timestamps: they count for the whole run only, so iteration %d '
                || 'cannot be judged on them.', kind, host, iteration)
            else printf('%s has no %s samples in iteration %d: the monitor stopped, started late, or its clock '
                || 'is off.', host, kind, iteration)
        end as finding,
        json_object('kind', kind, 'samples', samples, 'has_times', is_placeable) as evidence
    from coverage
),

-- cpu / loadgen: share of samples with little idle CPU ----------------------------------------------------------
cpu_busy as (
    select
        samples.host,
        samples.iteration,
        min(samples.role) as role,
        count(*) as samples,
        any_value(case when samples.role = 'loadgen' then thresholds.loadgen_cpu_idle_min_pct
            else thresholds.cpu_idle_min_pct end) as idle_min_pct,
        any_value(thresholds.cpu_busy_share_pct) as busy_share_pct,
        count(*) filter (where samples.cpu_idle_pct < case when samples.role = 'loadgen'
            then thresholds.loadgen_cpu_idle_min_pct else thresholds.cpu_idle_min_pct end) as busy_samples,
        avg(samples.cpu_idle_pct) as idle_avg,
        min(samples.cpu_idle_pct) as idle_min
    from samples
    cross join thresholds
    where samples.kind = 'vmstat' and samples.iteration is not null and samples.cpu_idle_pct is not null
    group by samples.host, samples.iteration
),

cpu_judged as (
    select
        cpu_busy.*,
        100.0 * busy_samples / samples >= busy_share_pct as is_saturated,
        throughput.calls_per_s
    from cpu_busy
    left join throughput using (iteration)
),

cpu_findings as (
    select
        host,
        'vmstat' as subject,
        case when role = 'loadgen' then 'loadgen_cpu' else 'cpu_idle' end as rule,
        case when role = 'loadgen' then 'loadgen' else 'cpu' end as area,
        iteration,
        case when not is_saturated then 'ok' when role = 'loadgen' then 'fail' else 'warn' end as severity,
        case
            when is_saturated and role = 'loadgen' then printf(
                'Load generator %s ran out of CPU in iteration %d: idle under %g %% in %d of %d samples. The '
                || 'iteration''s throughput%s measures the load generator, not the service.',
                host, iteration, idle_min_pct, busy_samples, samples,
                coalesce(printf(' (%.1f calls/s)', calls_per_s), ''))
            when is_saturated then printf(
                'CPU of %s was saturated in iteration %d: idle under %g %% in %d of %d samples (average idle '
                || '%.1f %%).', host, iteration, idle_min_pct, busy_samples, samples, idle_avg)
            when role = 'loadgen' then printf(
                'Load generator %s had CPU to spare in iteration %d (average idle %.1f %%; idle under %g %% in '
                || '%d of %d samples).', host, iteration, idle_avg, idle_min_pct, busy_samples, samples)
            else printf(
                'CPU of %s was not saturated in iteration %d (average idle %.1f %%; idle under %g %% in %d of %d '
                || 'samples).', host, iteration, idle_avg, idle_min_pct, busy_samples, samples)
        end as finding,
        json_object(
            'samples', samples, 'samples_idle_below_min', busy_samples, 'cpu_idle_min_pct', idle_min_pct,
            'cpu_busy_share_pct', busy_share_pct, 'cpu_idle_avg', round(idle_avg, 2), 'cpu_idle_min', idle_min,
            'calls_per_s', round(calls_per_s, 2)
        ) as evidence
    from cpu_judged
),

-- disk and swap: I/O wait and swapping ---------------------------------------------------------------------------
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

-- gc: overhead and full collections per iteration ------------------------------------------------------------
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

-- restarts: a container that restarts during a test has lost its state and its warm-up ------------------------
restart_findings as (
    select
        host,
        container as subject,
        'container_restart' as rule,
        'memory' as area,
        iteration,
        case when restarts > 0 then 'warn' else 'ok' end as severity,
        case
            when restarts > 0 then printf(
                'Container %s on %s restarted %d time%s in iteration %d (its network or block counters went back '
                || 'to 0): its caches and JIT were cold again and its memory figures start over.', container, host,
                restarts, case when restarts = 1 then '' else 's' end, iteration)
            else printf('Container %s on %s did not restart in iteration %d.', container, host, iteration)
        end as finding,
        json_object('restarts', restarts, 'samples', samples) as evidence
    from containers
    where iteration is not null
),

-- network: bytes per call should stay about the same from iteration to iteration ---------------------------------
host_calls as (
    select iteration, host, calls
    from iteration_stats
    where run_id = $run_id and side = 'server'
),

net as (
    select
        containers.host,
        containers.container,
        containers.iteration,
        containers.net_in_bytes,
        containers.net_out_bytes,
        coalesce(host_calls.calls, throughput.calls) as calls
    from containers
    left join host_calls using (iteration, host)
    left join throughput using (iteration)
    where containers.iteration is not null and containers.net_in_bytes is not null
),

-- The reference of each iteration: with three or more iterations with calls, the median of them all (a
-- real middle value, which one outlier does not move); with two, the other one (the median of two is
-- their average, which a 50x outlier never exceeds 3x: the normal one got the blame). Two that differ are
-- both flagged: which one is out of line cannot be told.
net_medians as (
    select
        host,
        container,
        count(*) as iterations_with_calls,
        median(net_in_bytes / calls) as in_per_call_median,
        median(net_out_bytes / calls) as out_per_call_median
    from net
    where calls > 0
    group by host, container
),

net_references as (
    select
        net.host,
        net.container,
        net.iteration,
        coalesce(medians.iterations_with_calls, 0) as iterations_with_calls,
        case when medians.iterations_with_calls >= 3 then 'median' else 'other' end as reference,
        case
            when medians.iterations_with_calls >= 3 then medians.in_per_call_median
            else any_value(others.net_in_bytes / others.calls)
        end as in_per_call_reference,
        case
            when medians.iterations_with_calls >= 3 then medians.out_per_call_median
            else any_value(others.net_out_bytes / others.calls)
        end as out_per_call_reference
    from net
    left join net_medians as medians using (host, container)
    left join net as others
        on others.host = net.host
        and others.container = net.container
        and others.iteration <> net.iteration
        and others.calls > 0
    group by
        net.host, net.container, net.iteration, medians.iterations_with_calls, medians.in_per_call_median,
        medians.out_per_call_median
),

net_judged as (
    select
        net.*,
        net.net_in_bytes / nullif(net.calls, 0) as in_per_call,
        net.net_out_bytes / nullif(net.calls, 0) as out_per_call,
        refs.in_per_call_reference,
        refs.out_per_call_reference,
        refs.reference,
        refs.iterations_with_calls,
        thresholds.net_per_call_max_ratio as max_ratio,
        greatest(
            (net.net_in_bytes / nullif(net.calls, 0)) / nullif(refs.in_per_call_reference, 0),
            refs.in_per_call_reference / nullif(net.net_in_bytes / nullif(net.calls, 0), 0),
            (net.net_out_bytes / nullif(net.calls, 0)) / nullif(refs.out_per_call_reference, 0),
            refs.out_per_call_reference / nullif(net.net_out_bytes / nullif(net.calls, 0), 0)
        ) as worst_ratio
    from net
    cross join thresholds
    join net_references as refs using (host, container, iteration)
),

network_findings as (
    select
        host,
        container as subject,
        'network_per_call' as rule,
        'network' as area,
        iteration,
        case
            when calls > 0 and net_in_bytes + net_out_bytes = 0 then 'warn'
            when calls > 0 and iterations_with_calls >= 2 and worst_ratio > max_ratio then 'warn'
            else 'ok'
        end as severity,
        case
            when calls > 0 and net_in_bytes + net_out_bytes = 0 then printf(
                'Container %s on %s moved no network bytes in iteration %d although %d calls were made: the calls '
                || 'did not pass through this container.', container, host, iteration, calls)
            when calls > 0 and iterations_with_calls >= 2 and worst_ratio > max_ratio then printf(
                'Network traffic of container %s on %s does not move with the calls in iteration %d: %.0f bytes in '
                || 'and %.0f out per call, against %.0f and %.0f %s.', container, host, iteration, in_per_call,
                out_per_call, in_per_call_reference, out_per_call_reference,
                case when reference = 'median' then 'in the median iteration'
                     else 'in the other iteration (of two: which one is out of line cannot be told)' end)
            when coalesce(calls, 0) = 0 then printf(
                'Network of container %s on %s not judged in iteration %d: no calls were measured.',
                container, host, iteration)
            when iterations_with_calls < 2 then printf(
                'Network of container %s on %s not judged in iteration %d: it takes two iterations with calls to '
                || 'compare.', container, host, iteration)
            else printf(
                'Network traffic of container %s on %s moves with the calls in iteration %d (%.0f bytes in and %.0f '
                || 'out per call).', container, host, iteration, in_per_call, out_per_call)
        end as finding,
        json_object(
            'calls', calls, 'net_in_bytes', net_in_bytes, 'net_out_bytes', net_out_bytes,
            'in_per_call', round(in_per_call, 1), 'out_per_call', round(out_per_call, 1),
            'in_per_call_reference', round(in_per_call_reference, 1),
            'out_per_call_reference', round(out_per_call_reference, 1), 'reference', reference,
            'iterations_with_calls', iterations_with_calls, 'net_per_call_max_ratio', max_ratio
        ) as evidence
    from net_judged
),

findings as (
    select * from coverage_findings
    union all by name select * from cpu_findings
    union all by name select * from disk_findings
    union all by name select * from swap_findings
    union all by name select * from gc_overhead_findings
    union all by name select * from full_gc_findings
    union all by name select * from old_trend_findings
    union all by name select * from container_trend_findings
    union all by name select * from restart_findings
    union all by name select * from network_findings
),

final as (
    select
        $run_id as run_id,
        host,
        area,
        iteration,
        severity,
        finding,
        evidence::json as evidence,
        rule,
        subject
    from findings
)

select * from final order by host, iteration nulls last, area, rule, subject
