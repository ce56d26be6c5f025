-- Report query: `perfcampaign changes`: the events (change points of one shift grouped, view change_events),
-- regressions first, new ones (not pending) first, newest first.
-- grain: one row per event_id
-- upstream: change_events, is_wanted
select
    event_id, campaign, scenario, run_id, run_started_at, kind, direction, series, sides, metrics, change_pct,
    largest_change_pct, status, untriaged, label_changes, previous_run_id, first_detected_in, plan_id, runs,
    found_by, series_keys
from change_events
where is_wanted(campaign, $campaign) and is_wanted(status, $status)
    and ($since is null or run_started_at >= $since)
order by direction = 'regression' desc, kind = 'change' desc, status = 'new' desc, run_started_at desc, series desc,
    abs(change_pct) desc nulls first, campaign, scenario, event_id
