-- Report query: the runs tables of the campaigns' site pages (tasks/site), each newest first: status, verdict (by
-- sql/macros/run_verdict.sql), labels, whether the history leaves it out, its last report, its bundle and its Prefect
-- flow run's page (run.yaml `prefect.flow_run_url`, kept in runs.manifest; null outside Prefect).
-- grain: one row per run_id
-- upstream: runs, validations, verdicts, history_exclusions, reports, run_verdict
select
    runs.campaign,
    runs.run_id,
    runs.scenario,
    runs.started_at,
    runs.status,
    runs.status_reason,
    (select string_agg(key || '=' || value, ' ' order by key)
     from (select unnest(map_keys(runs.labels)) as key, unnest(map_values(runs.labels)) as value)) as labels,
    run_verdict(
        runs.status,
        (select success from validations where validations.run_id = runs.run_id),
        (select count(passed) from verdicts where verdicts.run_id = runs.run_id and verdicts.iteration is null),
        (select bool_and(passed) from verdicts where verdicts.run_id = runs.run_id and verdicts.iteration is null)
    ) as verdict,
    (select string_agg(reason, '; ' order by cause) from history_exclusions where history_exclusions.run_id = runs.run_id)
        as excluded_because,
    (select first(uri order by created_at desc) from reports where reports.run_id = runs.run_id) as report_uri,
    runs.bundle_uri,
    runs.manifest -> 'prefect' ->> 'flow_run_url' as flow_run_url
from runs
order by runs.campaign, runs.started_at desc, runs.run_id desc
