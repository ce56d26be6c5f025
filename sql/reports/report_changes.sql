-- Report query: the change points and outliers of a run's campaign at its last $last_runs runs up to the run,
-- for the History section's table; `is_new_here` marks the regressions this run's analysis found first.
-- grain: one row per change_id
-- upstream: recent_runs, change_points
select
    change_id, side, host, iteration, label, metric, run_id, before_value, after_value, change_pct, direction, kind,
    status, label_changes, first_detected_in, event_id,
    first_detected_in = $run_id and kind = 'change' and direction = 'regression' and status = 'new' as is_new_here
from change_points
where run_id in (select run_id from recent_runs($run_id, $last_runs))
order by is_new_here desc, direction = 'regression' desc, kind = 'change' desc, abs(change_pct) desc nulls first,
    metric, side, host, iteration, label
