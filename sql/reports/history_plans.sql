-- Report query: the series of a campaign (filtered as `perfcampaign history` is) grouped by plan: how many
-- comparable runs the longest and the shortest series have, to say where too few runs claim nothing.
-- grain: one row per (scenario, plan_id)
-- upstream: series, is_wanted
with counted as (
    select scenario, plan_id, any_value(plan) as plan, side, host, iteration, label, metric, count(*) as runs
    from series
    where campaign = $campaign
        and is_wanted(scenario, $scenario) and is_wanted(metric, $metric) and is_wanted(side, $side)
        and is_wanted(iteration, $iteration) and is_wanted(label, $label) and is_wanted(host, $host)
    group by all
)

select scenario, plan_id, any_value(plan) as plan, count(*) as series, max(runs) as most_runs, min(runs) as fewest_runs
from counted
group by scenario, plan_id
order by scenario, min(plan)
