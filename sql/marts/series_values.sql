-- Public mart: a run's values of every history series (docs/history.md), excluded runs included (the view
-- `series` leaves them out). Request metrics per iteration and side, for each host and all hosts ('(all)'),
-- and per label where a side has several labels (label_min_calls calls or more in the iteration); CPU busy
-- per host (vmstat); GC overhead and old generation after GC per JVM (jstat). `plan` is the iteration plan
-- (index and load of each iteration): runs of another plan are other series (`plan_id`). No min_ms: the
-- fastest call (a cache hit, an early error) says nothing of the level, and one rounded value flickers.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, side, host, iteration, label, metric
-- upstream: runs, iterations, int_request_stats, iteration_stats, iteration_summary, host_iteration_stats,
--           jvm_iteration_stats, load_text
with run as (
    select run_id, campaign, scenario, labels, started_at from runs where run_id = $run_id
),

plan as (
    select string_agg(iteration || ':' || load_text(load), ' ' order by iteration) as plan
    from iterations
    where run_id = $run_id
),

settings as (
    select coalesce((manifest -> 'history' ->> 'label_min_calls')::bigint, 100) as label_min_calls
    from runs
    where run_id = $run_id
),

labels as (
    select side, '(all)' as host, iteration, label, calls, calls_per_s, error_rate, avg_ms, p50_ms, p90_ms, p95_ms,
        p99_ms, max_ms
    from int_request_stats
    where grain = 'label' and side in ('server', 'client')
    qualify count(*) over (partition by side, iteration) > 1
        and calls >= (select label_min_calls from settings)
),

request_rows as (
    select side, host, iteration, '(all)' as label, calls, calls_per_s, error_rate, avg_ms, p50_ms, p90_ms,
        p95_ms, p99_ms, max_ms
    from iteration_stats
    where run_id = $run_id and side in ('server', 'client')
    union all
    select side, '(all)' as host, iteration, '(all)' as label, calls, calls_per_s, error_rate, avg_ms, p50_ms,
        p90_ms, p95_ms, p99_ms, max_ms
    from iteration_summary
    where run_id = $run_id and side in ('server', 'client')
    union all
    select * from labels
),

request_values as (
    select side, host, iteration, label, metric, value, calls
    from request_rows
    unpivot (value for metric in (calls_per_s, error_rate, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms))
),

cpu_values as (
    select 'host' as side, host, iteration, '(all)' as label, 'cpu_busy_pct' as metric,
        cpu_user_avg + cpu_system_avg as value, samples as calls
    from host_iteration_stats
    where run_id = $run_id and samples > 0
),

jvms as (
    select
        *,
        -- a host with several JVMs names each by its jstat file
        host || case when count(distinct source_path) over (partition by host) > 1 then ' ' || source_path else '' end
            as jvm
    from jvm_iteration_stats
    where run_id = $run_id and samples > 0
),

jvm_values as (
    select 'jvm' as side, jvm as host, iteration, '(all)' as label, metric, value, samples as calls
    from (select jvm, iteration, samples, gc_overhead_pct, old_used_after_gc_min_kb::double as old_after_gc_kb from jvms)
    unpivot (value for metric in (gc_overhead_pct, old_after_gc_kb))
),

all_values as (
    select * from request_values
    union all
    select * from cpu_values
    union all
    select * from jvm_values
),

final as (
    select
        run.campaign,
        run.scenario,
        left(md5(plan.plan), 8) as plan_id,
        plan.plan,
        all_values.side,
        all_values.host,
        all_values.iteration,
        all_values.label,
        all_values.metric,
        run.run_id,
        run.started_at as run_started_at,
        all_values.value::double as value,
        all_values.calls::bigint as calls,
        run.labels
    from all_values
    cross join run
    cross join plan
    where all_values.value is not null and isfinite(all_values.value)
)

select * from final order by side, host, iteration, label, metric
