-- Report query: the series each event moved, for the site's event pages (tasks/site): each
-- change point with its before and after levels (segment medians), its change and its triage.
-- grain: one row per change_id
-- upstream: change_points
select
    campaign, event_id, change_id, side, host, iteration, label, metric, run_id, previous_run_id, before_value, after_value,
    change_pct, direction, kind, p_value, status, triage_note, triaged_at
from change_points
order by campaign, event_id, metric, side, host, iteration, label
