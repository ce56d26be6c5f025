-- Report query: `perfcampaign history`: a campaign's series, each oldest run first (the last $last runs of
-- each), excluded runs included and marked, change points and outliers marked with their size, the labels
-- that changed with them, their triage and event, and the first run of each plan after another. An excluded run
-- (failed, cancelled, bad data, a person's word) is shown in time order among the runs of its plan or, when no
-- comparable run has its plan (a failed run that lost an iteration), of the plan of the runs before it: never
-- as a plan of its own.
-- grain: one row per (scenario, plan_id, side, host, iteration, label, metric, run_id)
-- upstream: series_values, history_exclusions, change_points, is_wanted
with excluded as (
    select run_id, string_agg(reason, '; ' order by cause) as reason
    from history_exclusions
    where campaign = $campaign
    group by run_id
),

comparable_plans as (
    select scenario, plan_id, min(run_started_at) as first_at, any_value(plan) as plan
    from series_values
    where campaign = $campaign and run_id not in (select run_id from excluded)
    group by scenario, plan_id
),

run_plans as (
    select distinct scenario, plan_id, run_id, run_started_at from series_values where campaign = $campaign
),

placed as (  -- the plan each run is shown under
    select run_plans.run_id,
        coalesce(own.plan_id, before.plan_id,
                 (select first(plan_id order by first_at) from comparable_plans as c where c.scenario = run_plans.scenario),
                 run_plans.plan_id) as shown_plan_id
    from run_plans
    left join comparable_plans as own on own.scenario = run_plans.scenario and own.plan_id = run_plans.plan_id
    asof left join comparable_plans as before
        on before.scenario = run_plans.scenario and run_plans.run_started_at >= before.first_at
),

wanted as (
    select series_values.* replace (placed.shown_plan_id as plan_id)
    from series_values
    join placed using (run_id)
    where campaign = $campaign
        and is_wanted(scenario, $scenario) and is_wanted(metric, $metric) and is_wanted(side, $side)
        and is_wanted(iteration, $iteration) and is_wanted(label, $label) and is_wanted(host, $host)
),

-- the oldest of each series' last $last runs: a top-N aggregate, 2-3 times cheaper than numbering every point
-- with a window (a sort of all 300,000 points of a 1,000-run x 300-series history)
oldest_shown as (
    select scenario, plan_id, side, host, iteration, label, metric,
        list_last(max({'started_at': run_started_at, 'run_id': run_id}, $last)) as oldest
    from wanted
    group by scenario, plan_id, side, host, iteration, label, metric
),

points as (
    select wanted.*
    from wanted
    join oldest_shown using (scenario, plan_id, side, host, iteration, label, metric)
    where {'started_at': wanted.run_started_at, 'run_id': wanted.run_id} >= oldest_shown.oldest
),

plans as (  -- the plans runs are shown under, from their first comparable run
    select run_plans.scenario, placed.shown_plan_id as plan_id,
        coalesce(min(comparable_plans.first_at), min(run_plans.run_started_at)) as first_at,
        coalesce(any_value(comparable_plans.plan), 'no comparable run') as plan
    from run_plans
    join placed using (run_id)
    left join comparable_plans on comparable_plans.scenario = run_plans.scenario
        and comparable_plans.plan_id = placed.shown_plan_id
    group by run_plans.scenario, placed.shown_plan_id
),

first_of_plan as (
    select this.scenario, this.plan_id, this.first_at, this.plan
    from plans as this
    where exists (select 1 from plans as other
                  where other.scenario = this.scenario and other.first_at < this.first_at)
),

final as (
    select
        points.scenario, points.plan_id, points.side, points.host, points.iteration, points.label, points.metric,
        points.run_id, points.run_started_at, points.value, points.calls, plans.first_at as plan_first_at,
        concat_ws('; ',
            case when excluded.reason is not null then 'excluded: ' || excluded.reason end,
            case when first_of_plan.plan is not null and points.run_started_at = first_of_plan.first_at
                then 'plan changed: ' || first_of_plan.plan || ' (another series)' end,
            case when changes.kind is not null then
                changes.kind || ' ' || coalesce(printf('%+.1f %%', changes.change_pct), 'from 0') || ' ' || changes.direction
                || coalesce(' (' || changes.label_changes || ')', '') || ', ' || changes.status
                || case when changes.found_by <> 'series' then ', found by ' || changes.found_by else '' end
                || ', event ' || changes.event_id end
        ) as note
    from points
    left join excluded using (run_id)
    left join first_of_plan using (scenario, plan_id)
    join plans using (scenario, plan_id)  -- its first run orders the plans: a join, not a second window sort
    left join change_points as changes
        on changes.campaign = $campaign and changes.scenario = points.scenario and changes.plan_id = points.plan_id
        and changes.side = points.side and changes.host = points.host and changes.iteration = points.iteration
        and changes.label = points.label and changes.metric = points.metric and changes.run_id = points.run_id
)

select * exclude (plan_first_at) from final
order by scenario, plan_first_at, plan_id, side, host, iteration, label, metric, run_started_at, run_id
