-- The load each iteration carried, for the health findings: the calls the servers saw (else those the
-- clients sent), and the clients' rate (else the servers').
-- materialized: table
-- grain: iteration
-- upstream: iteration_summary
with summary as (
    select * from iteration_summary where run_id = $run_id
),

final as (
    select
        iteration,
        coalesce(max(calls) filter (where side = 'server'), max(calls) filter (where side = 'client')) as calls,
        coalesce(max(calls_per_s) filter (where side = 'client'), max(calls_per_s) filter (where side = 'server'))
            as calls_per_s
    from summary
    group by iteration
)

select * from final
