-- Report query: the events (change points of one shift grouped, view change_events) of a run's campaign at its
-- last $last_runs runs up to the run, for the History section and the JUnit file; `is_new_here` marks the
-- regressions this run's analysis found first.
-- grain: one row per event_id
-- upstream: recent_runs, change_events
select
    event_id, run_id, kind, direction, series, sides, metrics, change_pct, largest_change_pct, status, untriaged,
    label_changes, first_detected_in, series_keys,
    first_detected_in = $run_id and kind = 'change' and direction = 'regression' and status = 'new' as is_new_here
from change_events
where run_id in (select run_id from recent_runs($run_id, $last_runs))
order by is_new_here desc, direction = 'regression' desc, kind = 'change' desc, series desc,
    abs(change_pct) desc nulls first, event_id
