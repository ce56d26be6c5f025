-- Public mart: what the host, JVM and container metrics say about each host in each iteration, as sentences a
-- person would write, with the numbers behind them (evidence, JSON). Every check that can be made gives a row,
-- `ok` included, and every host gets a `data` row for every kind of metrics in every iteration, so every
-- iteration of every host has a finding or an explicit ok. Trends are judged over the whole run (iteration NULL).
-- Thresholds: int_health_thresholds (the manifest's `thresholds:` over defaults).
-- Rules, one intermediate model per family (int_health_findings__<family>), unioned here: data (samples),
-- cpu (cpu_idle; loadgen_cpu, area loadgen), disk (disk_wait), memory (swap, old_gen_trend,
-- old_gen_fill, container_memory_trend), containers (container_restart, area memory), gc (gc_overhead, full_gc),
-- network (network_per_call), sysstat (nic_busy, area network; disk_busy, area disk; process_cpu, area cpu;
-- thread_growth, area memory).
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host, subject, rule, iteration -- subject is the metric kind for `samples`, 'vmstat' for
--        host rules, the jstat file for JVM rules, the container for container rules
-- upstream: int_health_findings__data, int_health_findings__cpu, int_health_findings__disk,
--           int_health_findings__memory, int_health_findings__containers, int_health_findings__gc,
--           int_health_findings__network, int_health_findings__sysstat
with findings as (
    select * from int_health_findings__data
    union all by name select * from int_health_findings__cpu
    union all by name select * from int_health_findings__disk
    union all by name select * from int_health_findings__memory
    union all by name select * from int_health_findings__containers
    union all by name select * from int_health_findings__gc
    union all by name select * from int_health_findings__network
    union all by name select * from int_health_findings__sysstat
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
