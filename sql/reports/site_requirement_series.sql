-- Report query: the site's requirement trends (tasks/site), every campaign in one query: for each requirement
-- of a campaign's last run, the figure it judges in each of the campaign's last $last_runs runs that judged
-- the same requirement (same id, side, metric and scope): the whole-run line of `verdicts` (the worst judged
-- value, at its stated iteration or load when it has one), that run's threshold and whether it held; with
-- the last run's rule, what it is judged at and its threshold (the line drawn). Failed and excluded runs flagged.
-- grain: one row per (campaign, requirement_id, run_id)
-- upstream: runs, verdicts, history_exclusions
with recent as (
    select campaign, run_id, started_at, status
    from runs
    qualify row_number() over (partition by campaign order by started_at desc, run_id desc) <= $last_runs
),

last_run as (
    select campaign, run_id
    from recent
    qualify row_number() over (partition by campaign order by started_at desc, run_id desc) = 1
),

wanted as (
    select
        last_run.campaign, verdicts.requirement_id, verdicts.side, verdicts.metric, verdicts.scope, verdicts.op,
        verdicts.unit, verdicts.rule, verdicts.judged_by, verdicts.threshold as last_threshold
    from verdicts
    join last_run using (run_id)
    where verdicts.iteration is null
),

excluded as (
    select distinct run_id from history_exclusions
)

select
    wanted.campaign, wanted.requirement_id, wanted.side, wanted.metric, wanted.scope, wanted.op, wanted.unit,
    wanted.rule, wanted.judged_by, wanted.last_threshold,
    recent.run_id, recent.started_at as run_started_at, recent.status as run_status,
    excluded.run_id is not null as is_excluded,
    verdicts.measured, verdicts.threshold, verdicts.passed
from wanted
join recent using (campaign)
join verdicts
    on verdicts.run_id = recent.run_id and verdicts.iteration is null and verdicts.is_judged
    and verdicts.requirement_id = wanted.requirement_id and verdicts.side = wanted.side
    and verdicts.metric = wanted.metric and verdicts.scope is not distinct from wanted.scope
left join excluded on excluded.run_id = recent.run_id
order by wanted.campaign, wanted.requirement_id, recent.started_at, recent.run_id
