-- Report query: the regressions an analysis found first when a run arrived, untriaged: the changes of level
-- (not one-night outliers) that the nightly flow announces (event, artifact, failing JUnit testcase).
-- grain: one row per change_id
-- upstream: change_points
select
    change_id, campaign, scenario, side, host, iteration, label, metric, run_id, previous_run_id,
    before_value, after_value, change_pct, p_value, label_changes, status, first_detected_in
from change_points
where campaign = $campaign
    and first_detected_in = $run_id
    and kind = 'change'
    and direction = 'regression'
    and status = 'new'
order by abs(change_pct) desc nulls first, metric, side, host, iteration, label
