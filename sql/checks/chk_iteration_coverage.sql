-- Data expectations on coverage: every iteration has requests from every host of every side. One row per
-- (iteration, side, host) of the run, zero-call rows included: a host is expected in every iteration once
-- any of its request sources is in the bundle.
-- grain: one row per (run_id, iteration, side, host)
-- upstream: iterations, sources, request_facts
with windows as (
    select iteration from iterations where run_id = $run_id
),

request_sources as (
    select source_key, side, host from sources where run_id = $run_id and side in ('server', 'client')
),

hosts as (
    select distinct side, host from request_sources
),

calls as (
    select request_sources.side, request_sources.host, facts.iteration, count(*) as calls
    from request_facts as facts
    join request_sources using (source_key)
    where facts.iteration is not null
    group by all
),

final as (
    select windows.iteration, hosts.side, hosts.host, coalesce(calls.calls, 0) as calls
    from windows
    cross join hosts
    left join calls using (iteration, side, host)
)

select * from final order by iteration, side, host
