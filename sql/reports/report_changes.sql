-- Report query: the change points and outliers of a run's campaign at its last $last_runs runs up to the run,
-- for the History section's table; `is_new_here` marks the regressions this run's analysis found first.
-- grain: one row per change_id
-- upstream: runs, change_points
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
    change_id, side, host, iteration, label, metric, run_id, before_value, after_value, change_pct, direction, kind,
    status, label_changes, first_detected_in, event_id,
    first_detected_in = $run_id and kind = 'change' and direction = 'regression' and status = 'new' as is_new_here
from change_points
where run_id in (select run_id from recent)
order by is_new_here desc, direction = 'regression' desc, kind = 'change' desc, abs(change_pct) desc nulls first,
    metric, side, host, iteration, label
