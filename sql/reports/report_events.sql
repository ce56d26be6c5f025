-- Report query: the events (change points of one shift grouped, view change_events) of a run's campaign at its
-- last $last_runs runs up to the run, for the History section and the JUnit file; `is_new_here` marks the
-- regressions this run's analysis found first.
-- grain: one row per event_id
-- upstream: runs, change_events
with this_run as (
    select campaign, scenario, started_at from runs where run_id = $run_id
),

recent as (
    select runs.run_id
    from runs
    join this_run using (campaign, scenario)
    where runs.started_at <= this_run.started_at
    order by runs.started_at desc
    limit $last_runs
)

select
    event_id, run_id, kind, direction, series, sides, metrics, change_pct, largest_change_pct, status, untriaged,
    label_changes, first_detected_in, series_keys,
    first_detected_in = $run_id and kind = 'change' and direction = 'regression' and status = 'new' as is_new_here
from change_events
where run_id in (select run_id from recent)
order by is_new_here desc, direction = 'regression' desc, kind = 'change' desc, series desc,
    abs(change_pct) desc nulls first, event_id
