-- Report query behind a soak's `load.target_from` (tasks/warehouse/soak_target.py): the earlier run its
-- target comes from and, per capacity series, the iteration with the highest throughput on the side, with
-- its load. The run is the newest of the campaign (and scenario) with a measured maximum on that side, or
-- the run named; a soak is never one (its windows all carry the same load). The caller picks the series
-- that matches the soak's step.
with candidates as (
    select runs.run_id, runs.started_at
    from runs
    where
        runs.campaign = $campaign
        and ($scenario is null or runs.scenario = $scenario)
        and ($run = 'latest' or runs.run_id = $run)
        and json_type((runs.manifest -> 'soak')) is distinct from 'OBJECT'
        and exists (
            select 1 from capacity
            where capacity.run_id = runs.run_id and capacity.side = $side and capacity.max_calls_per_s is not null
        )
),

chosen as (
    select run_id from candidates order by started_at desc, run_id desc limit 1
),

points as (
    select capacity.run_id, unnest(capacity.points) as point
    from capacity
    where capacity.run_id = (select run_id from chosen) and capacity.side = $side
),

highest as (
    select distinct on (point.series)
        run_id, point.series as series, point.iteration as iteration, point.calls_per_s as calls_per_s
    from points
    where point.calls_per_s is not null
    order by point.series, point.calls_per_s desc, point.iteration
),

final as (
    select highest.run_id, highest.series, highest.iteration, highest.calls_per_s, iterations.load::varchar as load
    from highest
    join iterations on iterations.run_id = highest.run_id and iterations.iteration = highest.iteration
)

select * from final order by series
