-- Public mart: per-iteration request statistics at the side level; calls_per_s = calls / duration_s.
-- Offered against achieved load: `offered_per_s` is the load offered to the service (tasks/bundle/load.py
-- offered_per_s: the step's planned arrival rate `rate_per_s`, else (calls sent + dropped) / duration_s
-- when the tool dropped calls, else NULL for a closed model); `achieved_per_s` the calls that were made
-- (= calls_per_s); `dropped` the calls an open-model tool could not start (k6 dropped_iterations points of
-- the side's sources; a JMeter client side fed by jtl files: planned_shortfall, its throughput timer's
-- rate_per_s x duration_s - the calls sent; the server side shows its clients' figure, since those calls
-- never reached it);
-- `error_rate_with_dropped` counts them as failed: (errors + dropped) / (calls + dropped). Points in an
-- iteration's warm-up are left out, as its calls are.
-- Per instance: with the manifest's `capacity.instance_key` (Hono: `adapters`), `instances` is the step's value
-- of that load key and `calls_per_s_per_instance` = calls_per_s / instances; both null without one.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, iteration, side
-- upstream: int_request_stats, iterations, int_k6_points, sources, runs
with stats as (
    select * from int_request_stats where run_id = $run_id and grain = 'side'
),

iterations as (
    select
        iterations.iteration,
        iterations.load,
        iterations.duration_s,
        try_cast(iterations.load ->> (runs.manifest -> 'capacity' ->> 'instance_key') as double) as instances
    from iterations
    join runs using (run_id)
    where iterations.run_id = $run_id
),

dropped_points as (
    select iteration, side, sum(value) as dropped
    from int_k6_points
    where metric = 'dropped_iterations' and iteration is not null and not is_warmup
    group by all
),

paced as (
    select count(*) > 0 as is_paced
    from sources
    where run_id = $run_id and side = 'client' and kind = 'jtl'
),

client as (
    select
        stats.iteration,
        stats.calls,
        coalesce(
            dropped_points.dropped,
            case when paced.is_paced then planned_shortfall(iterations.load::varchar, stats.calls, iterations.duration_s) end,
            0
        ) as dropped
    from stats
    join iterations using (iteration)
    cross join paced
    left join dropped_points on dropped_points.iteration = stats.iteration and dropped_points.side = 'client'
    where stats.side = 'client'
),

with_dropped as (
    select
        stats.*,
        coalesce(
            case when stats.side in ('server', 'client') then client.dropped else dropped_points.dropped end, 0
        )::bigint as dropped,
        case when stats.side = 'background' then stats.calls else coalesce(client.calls, stats.calls) end
            as sent_calls
    from stats
    left join dropped_points on dropped_points.iteration = stats.iteration and dropped_points.side = stats.side
    left join client on client.iteration = stats.iteration
),

final as (
    select
        with_dropped.* exclude (grain, host, status_code, label, dropped, sent_calls),
        offered_per_s(
            case when with_dropped.side = 'background' then '{}' else iterations.load::varchar end,
            with_dropped.sent_calls, with_dropped.dropped, iterations.duration_s
        ) as offered_per_s,
        with_dropped.calls_per_s as achieved_per_s,
        with_dropped.dropped,
        (with_dropped.errors + with_dropped.dropped) / (with_dropped.calls + with_dropped.dropped)
            as error_rate_with_dropped,
        -- a background load is not spread over the tested instances
        case when with_dropped.side <> 'background' then nullif(iterations.instances, 0) end as instances,
        case when with_dropped.side <> 'background'
            then with_dropped.calls_per_s / nullif(iterations.instances, 0) end as calls_per_s_per_instance
    from with_dropped
    join iterations using (iteration)
)

select * from final order by iteration, side
