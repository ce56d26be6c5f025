-- Report query: the site's capacity trends (tasks/site), every campaign in one query: each of a campaign's
-- last $last_runs runs' capacity per side and series (mart `capacity`): the highest throughput measured and,
-- where a knee was found, its load level, load and throughput. Failed and excluded runs flagged.
-- grain: one row per (run_id, side, series)
-- upstream: runs, capacity, history_exclusions
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
    capacity.knee_iteration, capacity.knee_load_level, capacity.knee_load, capacity.knee_calls_per_s
from capacity
join recent using (run_id)
left join excluded on excluded.run_id = recent.run_id
order by recent.campaign, capacity.side, capacity.series, recent.started_at, recent.run_id
