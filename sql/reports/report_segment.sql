-- Report query: a run's current segment in its campaign's history (docs/history.md), for its default baseline:
-- where it starts (the latest change point of its plan before the run, not triaged invalid) and the runs a
-- baseline may be (same plan, in the series: not excluded, and no one-night outlier anywhere).
-- grain: one row
-- upstream: runs, series, change_points
with this_run as (
    select campaign, scenario, started_at from runs where run_id = $run_id
),

this_plan as (
    select distinct plan_id from series where run_id = $run_id
)

select
    (select max(change_points.run_started_at)
     from change_points
     join this_run using (campaign, scenario)
     where change_points.plan_id in (select plan_id from this_plan)
        and change_points.kind = 'change'
        and change_points.status <> 'invalid'
        and change_points.run_started_at < this_run.started_at) as not_before,
    (select list(distinct run_id)
     from series
     where plan_id in (select plan_id from this_plan)
        and run_id not in (select run_id from change_points where kind = 'outlier')) as comparable
