-- Report query behind the host and JVM part of `perfcampaign compare`: per iteration (matched by index), host
-- and figure, run A's and run B's samples, their highest value and their mean. Figures: `cpu_busy_pct` (vmstat,
-- 100 - idle, % of all CPUs), `heap_used_kb` (jstat: eden + survivors + old generation, per JVM sample),
-- `threads` (pidstat/procfs); several JVMs or processes of one host sampled at one moment count by the largest
-- (its biggest heap, its process with the most threads). vmstat's since-boot line and the samples of an
-- iteration's warm-up are left out, as in the per-iteration marts.
-- grain: one row per (iteration, host, figure)
-- upstream: host_samples, iterations, in_warmup
with windows as (
    select run_id, iteration, started_at, warmup_s from iterations where run_id in ($run_a, $run_b)
),

samples as (
    select
        host_samples.run_id,
        host_samples.iteration,
        host_samples.host,
        host_samples.sampled_at,
        case host_samples.kind
            when 'vmstat' then 100 - host_samples.cpu_idle_pct
        end as cpu_busy_pct,
        case host_samples.kind
            when 'jstat' then coalesce(host_samples.eden_used_kb, 0) + coalesce(host_samples.survivor_used_kb, 0)
                + host_samples.old_used_kb
        end as heap_used_kb,
        case when host_samples.kind in ('pidstat', 'procfs') and host_samples.tid is null
            then host_samples.threads end as threads
    from host_samples
    join windows using (run_id, iteration)
    where
        host_samples.run_id in ($run_a, $run_b)
        and host_samples.kind in ('vmstat', 'jstat', 'pidstat', 'procfs')
        and not coalesce(host_samples.is_since_boot, false)
        and not in_warmup(host_samples.sampled_at, 0, windows.started_at, windows.warmup_s)
),

long as (
    -- one value per host and moment: the largest process's threads when several are watched
    select run_id, iteration, host, figure, sampled_at, max(value) as value
    from (unpivot samples on cpu_busy_pct, heap_used_kb, threads into name figure value value)
    group by all
),

per_run as (
    select
        run_id, iteration, host, figure,
        list(value order by sampled_at) as samples,
        max(value) as max_value,
        avg(value) as avg_value
    from long
    group by all
),

final as (
    select
        coalesce(a.iteration, b.iteration) as iteration,
        coalesce(a.host, b.host) as host,
        coalesce(a.figure, b.figure) as figure,
        a.max_value as a_max,
        b.max_value as b_max,
        a.avg_value as a_avg,
        b.avg_value as b_avg,
        coalesce(a.samples, []) as a_samples,
        coalesce(b.samples, []) as b_samples
    from (select * from per_run where run_id = $run_a) as a
    full join (select * from per_run where run_id = $run_b) as b using (iteration, host, figure)
)

select * from final
order by iteration, host, list_position(['cpu_busy_pct', 'heap_used_kb', 'threads'], figure)
