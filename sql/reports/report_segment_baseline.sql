-- Report query: the default baseline of a run that has a history: the latest earlier run of its current
-- segment (docs/history.md) — same campaign, scenario and plan, in every series (not excluded), not a
-- one-night outlier anywhere, no requirement broken, and not before the latest change point (not triaged
-- invalid) of the plan that precedes the run. A run that itself starts a new level is so compared with the
-- level before it; a later run with the level it is at, so a known change is not reported on every night.
-- grain: at most one row
-- upstream: runs, series, change_points, verdicts
with this_run as (
    select campaign, scenario, started_at from runs where run_id = $run_id
),

this_plan as (
    select distinct plan_id from series where run_id = $run_id
),

segment_start as (
    select max(change_points.run_started_at) as started_at
    from change_points
    join this_run using (campaign, scenario)
    where change_points.plan_id in (select plan_id from this_plan)
        and change_points.kind = 'change'
        and change_points.status <> 'invalid'
        and change_points.run_started_at < this_run.started_at
),

candidates as (
    select runs.run_id, runs.started_at
    from runs
    join this_run using (campaign, scenario)
    where runs.run_id <> $run_id
        and runs.started_at < this_run.started_at
        and runs.started_at >= coalesce((select started_at from segment_start), '-infinity'::timestamptz)
        and runs.run_id in (select run_id from series where plan_id in (select plan_id from this_plan))
        and runs.run_id not in (select run_id from change_points where kind = 'outlier')
        and not exists (
            select 1 from verdicts
            where verdicts.run_id = runs.run_id and verdicts.iteration is null and verdicts.passed = false
        )
)

select run_id from candidates order by started_at desc limit 1
