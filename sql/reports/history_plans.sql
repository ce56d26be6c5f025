-- Report query: the series of a campaign (filtered as `perfcampaign history` is) grouped by plan: how many
-- comparable runs the longest and the shortest series have, to say where too few runs claim nothing.
-- grain: one row per (scenario, plan_id)
-- upstream: series
with counted as (
    select scenario, plan_id, any_value(plan) as plan, side, host, iteration, label, metric, count(*) as runs
    from series
    where campaign = $campaign
        and ($scenario is null or scenario = $scenario)
        and ($metric is null or metric = $metric)
        and ($side is null or side = $side)
        and ($iteration is null or iteration = $iteration)
        and ($label is null or label = $label)
        and ($host is null or host = $host)
    group by all
)

select scenario, plan_id, any_value(plan) as plan, count(*) as series, max(runs) as most_runs, min(runs) as fewest_runs
from counted
group by scenario, plan_id
order by scenario, min(plan)
