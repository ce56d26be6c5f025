-- Public view: the change points and one-night outliers of the history series (docs/history.md), as the last
-- analysis of each campaign found them, with a person's triage: status new until triaged.
-- materialized: view
-- grain: change_id
-- upstream: detected_changes, change_triage
select
    detected_changes.* exclude (detected_at, first_detected_in),
    coalesce(change_triage.status, 'new') as status,
    change_triage.note as triage_note,
    change_triage.triaged_at,
    detected_changes.first_detected_in,
    detected_changes.detected_at
from detected_changes
left join change_triage using (change_id)
