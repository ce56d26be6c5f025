-- Report query: the key series of every campaign for the site's trend charts (tasks/site), in one query (one
-- per campaign costs 20 scans): every iteration's p95, throughput and error rate of each side over all hosts
-- and labels, for each campaign's last $last_runs runs (failed and excluded runs too, flagged), with the change point or outlier found at each point.
-- grain: one row per (run_id, plan_id, side, iteration, metric)
-- upstream: runs, series_values, history_exclusions, change_points
with recent as (
    select run_id, started_at, status
    from runs
    qualify row_number() over (partition by campaign order by started_at desc, run_id desc) <= $last_runs
),

excluded as (
    select distinct run_id from history_exclusions
),

points as (
    select series_values.*, recent.status as run_status
    from series_values
    join recent using (run_id)
    where series_values.host = '(all)' and series_values.label = '(all)'
        and series_values.side in ('server', 'client')
        and series_values.metric in ('p95_ms', 'calls_per_s', 'error_rate')
)

select
    points.campaign, points.run_id, points.run_started_at, points.run_status, points.plan_id, points.side, points.iteration,
    points.metric, points.value,
    excluded.run_id is not null as is_excluded,
    changes.kind, changes.change_pct, changes.direction, changes.status, changes.label_changes, changes.event_id
from points
left join excluded on excluded.run_id = points.run_id
left join change_points as changes
    on changes.campaign = points.campaign and changes.scenario = points.scenario and changes.plan_id = points.plan_id
    and changes.side = points.side and changes.host = points.host and changes.iteration = points.iteration
    and changes.label = points.label and changes.metric = points.metric and changes.run_id = points.run_id
order by points.campaign, points.metric, points.side, points.iteration, points.plan_id, points.run_started_at, points.run_id
