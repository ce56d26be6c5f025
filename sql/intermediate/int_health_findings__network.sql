-- Health findings, network rule (`network_per_call`): the bytes per call of every container should stay
-- about the same from iteration to iteration.
-- materialized: table
-- grain: host, subject, rule, iteration
-- upstream: int_health_thresholds, container_stats, iteration_stats, int_iteration_throughput
with thresholds as (
    select * from int_health_thresholds
),

containers as (
    select * from container_stats where run_id = $run_id
),

throughput as (
    select * from int_iteration_throughput
),

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

final as (
    select * from network_findings
)

select * from final
