-- Report query: the key series of a run's campaign for the History section: every iteration's p95, throughput
-- and error rate of each side over all hosts and labels, for the last $last_runs runs of the run's plan up to
-- the run (excluded runs too, flagged), with the change points and outliers found at each point.
-- grain: one row per (side, iteration, metric, run_id)
-- upstream: runs, series_values, history_exclusions, change_points
with this_run as (
    select campaign, scenario, started_at from runs where run_id = $run_id
),

this_plan as (
    select distinct plan_id from series_values where run_id = $run_id
),

recent as (
    select distinct series_values.run_id, series_values.run_started_at
    from series_values
    join this_run using (campaign, scenario)
    where series_values.plan_id in (select plan_id from this_plan)
        and series_values.run_started_at <= this_run.started_at
    order by series_values.run_started_at desc
    limit $last_runs
),

points as (
    select series_values.*
    from series_values
    join recent using (run_id)
    where series_values.plan_id in (select plan_id from this_plan)
        and series_values.host = '(all)' and series_values.label = '(all)'
        and series_values.side in ('server', 'client')
        and series_values.metric in ('p95_ms', 'calls_per_s', 'error_rate')
)

select
    points.side, points.iteration, points.metric, points.run_id, points.run_started_at, points.value,
    points.run_id in (select run_id from history_exclusions) as is_excluded,
    changes.kind, changes.change_pct, changes.direction, changes.status, changes.label_changes
from points
left join change_points as changes
    on changes.campaign = points.campaign and changes.scenario = points.scenario and changes.plan_id = points.plan_id
    and changes.side = points.side and changes.host = points.host and changes.iteration = points.iteration
    and changes.label = points.label and changes.metric = points.metric and changes.run_id = points.run_id
order by points.metric, points.side, points.iteration, points.run_started_at
