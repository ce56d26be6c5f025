-- Report query: the place of each run among the comparable runs of its plan, oldest first: runs next to each
-- other differ by one, whichever series they are in (a change point's event takes those one run either side).
-- grain: one row per (scenario, plan_id, run_id)
-- upstream: series
select
    scenario,
    plan_id,
    run_id,
    row_number() over (partition by scenario, plan_id order by run_started_at, run_id) as position
from (select distinct scenario, plan_id, run_id, run_started_at from series where campaign = $campaign)
