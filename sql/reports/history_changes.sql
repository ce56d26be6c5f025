-- Report query: `perfcampaign changes --series`: change points and outliers of each series, regressions first,
-- newest first.
-- grain: one row per change_id
-- upstream: change_points, is_wanted
select
    change_id, campaign, scenario, side, host, iteration, label, metric, run_id, run_started_at,
    before_value, after_value, change_pct, direction, kind, status, label_changes, p_value, previous_run_id,
    first_detected_in, triage_note, event_id, found_by
from change_points
where is_wanted(campaign, $campaign) and is_wanted(status, $status) and is_wanted(event_id, $event)
    and ($since is null or run_started_at >= $since)
order by direction = 'regression' desc, kind = 'change' desc, run_started_at desc, abs(change_pct) desc nulls first,
    campaign, scenario, metric, side, host, iteration, label
