-- Health findings, container rule (`container_restart`, area memory): a container that restarts during a
-- test has lost its state and its warm-up.
-- materialized: table
-- grain: host, subject, rule, iteration
-- upstream: container_stats
with containers as (
    select * from container_stats where run_id = $run_id
),

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

final as (
    select * from restart_findings
)

select * from final
