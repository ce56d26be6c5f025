-- Report query: the site's home page (tasks/site): one row per campaign: its last run (when, labels, status,
-- verdict by sql/macros/run_verdict.sql), the requirements it held and failed, its open regression events
-- (shifts of level not yet triaged acknowledged, expected or invalid: new, pending or mixed) with the
-- largest change among them, where its last report was published, its bundle and its Prefect flow run's page
-- (run.yaml `prefect.flow_run_url`, kept in runs.manifest; null for a run made outside Prefect).
-- grain: one row per campaign
-- upstream: runs, validations, verdicts, change_events, reports, run_verdict
with last_run as (
    select *
    from runs
    qualify row_number() over (partition by campaign order by started_at desc, run_id desc) = 1
),

run_counts as (
    select campaign, count(*) as runs from runs group by campaign
),

requirements as (
    select run_id, count(*) filter (where passed) as held, count(*) filter (where not passed) as failed,
        count(passed) as judged, bool_and(passed) as all_hold
    from verdicts
    where iteration is null
    group by run_id
),

open_events as (
    select campaign, count(*) as open_regressions,
        first(change_pct order by abs(change_pct) desc nulls last) as worst_change_pct
    from change_events
    where kind = 'change' and direction = 'regression' and status not in ('acknowledged', 'expected', 'invalid')
    group by campaign
),

last_report as (
    select run_id, first(uri order by created_at desc) as report_uri from reports group by run_id
),

final as (
    select
        last_run.campaign,
        run_counts.runs,
        last_run.run_id,
        last_run.scenario,
        last_run.started_at,
        last_run.status,
        last_run.status_reason,
        (select string_agg(key || '=' || value, ' ' order by key)
         from (select unnest(map_keys(last_run.labels)) as key, unnest(map_values(last_run.labels)) as value))
            as labels,
        run_verdict(
            last_run.status,
            (select success from validations where validations.run_id = last_run.run_id),
            coalesce(requirements.judged, 0),
            requirements.all_hold
        ) as verdict,
        coalesce(requirements.held, 0) as requirements_held,
        coalesce(requirements.failed, 0) as requirements_failed,
        coalesce(open_events.open_regressions, 0) as open_regressions,
        open_events.worst_change_pct,
        last_report.report_uri,
        last_run.bundle_uri,
        last_run.manifest -> 'prefect' ->> 'flow_run_url' as flow_run_url
    from last_run
    join run_counts using (campaign)
    left join requirements using (run_id)
    left join open_events using (campaign)
    left join last_report using (run_id)
)

select * from final order by campaign
