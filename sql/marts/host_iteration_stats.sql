-- Public mart: CPU, run queue and block I/O of every host with vmstat samples, per iteration. Statistics
-- leave out vmstat's first row (the average since boot) and the samples in an iteration's warm-up
-- (int_host_samples.is_warmup). Every such host gets a row for every iteration:
-- samples = 0 and NULL statistics where it has none there.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host, iteration
-- upstream: int_host_samples, host_metric_sources, iterations
with samples as (
    select *
    from int_host_samples
    where kind = 'vmstat' and not is_since_boot and iteration is not null and not is_warmup
),

hosts as (
    select host, min(role) as role
    from host_metric_sources
    where run_id = $run_id and kind = 'vmstat'
    group by host
),

iterations as (
    select iteration from iterations where run_id = $run_id
),

per_iteration as (
    select
        iteration,
        host,
        count(*) as samples,
        avg(cpu_user_pct) as cpu_user_avg,
        avg(cpu_system_pct) as cpu_system_avg,
        avg(cpu_idle_pct) as cpu_idle_avg,
        min(cpu_idle_pct) as cpu_idle_min,
        avg(cpu_wait_pct) as cpu_wait_avg,
        avg(cpu_steal_pct) as cpu_steal_avg,
        max(run_queue) as run_queue_max,
        avg(blocks_in_per_s) as blocks_in_per_s,
        avg(blocks_out_per_s) as blocks_out_per_s,
        avg(swap_in_kb_per_s) as swap_in_kb_per_s,
        avg(swap_out_kb_per_s) as swap_out_kb_per_s,
        min(mem_free_kb) as mem_free_min_kb,
        avg(interrupts_per_s) as interrupts_per_s,
        avg(context_switches_per_s) as context_switches_per_s
    from samples
    group by iteration, host
),

final as (
    select
        $run_id as run_id,
        iterations.iteration,
        hosts.host,
        hosts.role,
        coalesce(per_iteration.samples, 0) as samples,
        per_iteration.cpu_user_avg,
        per_iteration.cpu_system_avg,
        per_iteration.cpu_idle_avg,
        per_iteration.cpu_idle_min,
        per_iteration.cpu_wait_avg,
        per_iteration.cpu_steal_avg,
        per_iteration.run_queue_max,
        per_iteration.blocks_in_per_s,
        per_iteration.blocks_out_per_s,
        per_iteration.swap_in_kb_per_s,
        per_iteration.swap_out_kb_per_s,
        per_iteration.mem_free_min_kb,
        per_iteration.interrupts_per_s,
        per_iteration.context_switches_per_s
    from iterations
    cross join hosts
    left join per_iteration
        on per_iteration.iteration = iterations.iteration and per_iteration.host = hosts.host
)

select * from final order by iteration, host
