-- Report query: the site's capacity trends (tasks/site), every campaign in one query: each of a campaign's
-- last $last_runs runs' capacity per side and series (mart `capacity`): the highest throughput measured and,
-- where a knee was found, its load level, load and throughput. Failed and excluded runs flagged.
-- The highest throughput is the history's series of calls_per_s of its side over all hosts and labels at the
-- iteration it was measured in (the same figure, iteration_summary's): `changes` lists the change point or
-- outlier (`change_points`) of that series at the run, in the shape of site_requirement_series.sql's (kind change,
-- pending or outlier; its change_pct; its iteration; the labels that changed). The knee's load level is no series.
-- grain: one row per (run_id, side, series)
-- upstream: runs, capacity, history_exclusions, change_points
with recent as (
    select campaign, run_id, started_at, status
    from runs
    qualify row_number() over (partition by campaign order by started_at desc, run_id desc) <= $last_runs
),

excluded as (
    select distinct run_id from history_exclusions
)

select
    recent.campaign, recent.run_id, recent.started_at as run_started_at, recent.status as run_status,
    excluded.run_id is not null as is_excluded,
    capacity.side, capacity.series, capacity.max_calls_per_s, capacity.max_iteration,
    capacity.knee_iteration, capacity.knee_load_level, capacity.knee_load, capacity.knee_calls_per_s,
    (select list({'kind': case when c.kind = 'outlier' then 'outlier' when c.status = 'pending' then 'pending'
                               else 'change' end,
                  'low_pct': c.change_pct, 'high_pct': c.change_pct, 'iterations': [c.iteration],
                  'label_changes': c.label_changes})
     from change_points as c
     where c.run_id = capacity.run_id and c.side = capacity.side and c.host = '(all)' and c.label = '(all)'
        and c.metric = 'calls_per_s' and c.iteration = capacity.max_iteration) as changes
from capacity
join recent using (run_id)
left join excluded on excluded.run_id = recent.run_id
order by recent.campaign, capacity.side, capacity.series, recent.started_at, recent.run_id
