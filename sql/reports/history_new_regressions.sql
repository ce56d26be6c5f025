-- Report query: the regression events an analysis found first when a run arrived, untriaged: the shifts of
-- level (not one-night outliers) that the nightly flow announces (event, artifact, failing JUnit testcase),
-- one per event however many series moved.
-- grain: one row per event_id
-- upstream: change_events
select
    event_id, campaign, scenario, run_id, previous_run_id, series, sides, metrics, change_pct, largest_change_pct,
    label_changes, status, untriaged, first_detected_in, series_keys
from change_events
where campaign = $campaign
    and first_detected_in = $run_id
    and kind = 'change'
    and direction = 'regression'
    and status = 'new'
order by series desc, abs(change_pct) desc nulls first, event_id
