-- Public mart: garbage collection and heap of every JVM (jstat -gc), per iteration.
-- GC counts and times are events during the iteration: the counter at the last sample before the iteration's
-- end minus the counter at the last sample before its start (int_sample_windows). gc_overhead_pct is GC time
-- over the wall-clock time between those two samples. Heap figures come from the samples inside the iteration.
-- Its warm-up is left out of both: the counters start at the last sample before the warm-up's end, and heap
-- figures read the samples after it (int_host_samples.is_warmup).
-- Every JVM gets a row for every iteration: samples = 0 and NULL figures where it has none there.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host, source_path, iteration -- one JVM per jstat file
-- upstream: int_host_samples, host_metric_sources, iterations, int_sample_windows
with jvms as (
    select source_key, host, role, path as source_path
    from host_metric_sources
    where run_id = $run_id and kind = 'jstat'
),

-- old_collected: a GC ran since the file's previous line and the old generation did not grow: it was
-- collected (full GC, G1 mixed) or nothing was promoted. A young GC that promoted objects leaves a higher
-- old generation that says nothing about what is live there.
samples as (
    select
        facts.*,
        facts.gc_count_since_previous > 0
            and facts.old_used_kb <= lag(facts.old_used_kb) over (partition by facts.source_key order by facts.line_no)
            as old_collected
    from int_host_samples as facts
    join jvms using (source_key)
),

iterations as (
    select iteration from iterations where run_id = $run_id
),

heap as (
    select
        source_key,
        iteration,
        count(*) as samples,
        max(eden_used_kb + survivor_used_kb) as young_used_max_kb,
        arg_min(old_used_kb, line_no) as old_used_start_kb,
        arg_max(old_used_kb, line_no) as old_used_end_kb,
        max(old_used_kb) as old_used_max_kb,
        min(old_used_kb) filter (where old_collected) as old_used_after_gc_min_kb,
        arg_max(old_capacity_kb, line_no) as old_capacity_kb,
        max(metaspace_used_kb) as metaspace_used_max_kb
    from samples
    where iteration is not null and not is_warmup
    group by source_key, iteration
),

counters as (
    select
        windows.source_key,
        windows.iteration,
        first_sample.sampled_at as counted_from_at,
        last_sample.sampled_at as counted_to_at,
        last_sample.young_gc_count - first_sample.young_gc_count as young_gc_count,
        last_sample.young_gc_time_s - first_sample.young_gc_time_s as young_gc_time_s,
        last_sample.full_gc_count - first_sample.full_gc_count as full_gc_count,
        last_sample.full_gc_time_s - first_sample.full_gc_time_s as full_gc_time_s,
        last_sample.concurrent_gc_count - first_sample.concurrent_gc_count as concurrent_gc_count,
        last_sample.gc_time_s - first_sample.gc_time_s as gc_time_s
    from int_sample_windows as windows
    join samples as first_sample
        on first_sample.source_key = windows.source_key and first_sample.line_no = windows.start_line_no
    join samples as last_sample
        on last_sample.source_key = windows.source_key and last_sample.line_no = windows.end_line_no
),

final as (
    select
        $run_id as run_id,
        iterations.iteration,
        jvms.host,
        jvms.role,
        jvms.source_path,
        coalesce(heap.samples, 0) as samples,
        counters.young_gc_count,
        counters.full_gc_count,
        counters.concurrent_gc_count,
        counters.young_gc_time_s,
        counters.full_gc_time_s,
        counters.gc_time_s,
        100 * counters.gc_time_s
            / nullif(epoch(counters.counted_to_at) - epoch(counters.counted_from_at), 0) as gc_overhead_pct,
        counters.counted_from_at,
        counters.counted_to_at,
        heap.young_used_max_kb,
        heap.old_used_start_kb,
        heap.old_used_end_kb,
        heap.old_used_max_kb,
        heap.old_used_after_gc_min_kb,
        heap.old_capacity_kb,
        heap.metaspace_used_max_kb
    from iterations
    cross join jvms
    left join heap on heap.source_key = jvms.source_key and heap.iteration = iterations.iteration
    left join counters on counters.source_key = jvms.source_key and counters.iteration = iterations.iteration
)

select * from final order by iteration, host, source_path
