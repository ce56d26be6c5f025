-- Report query: the triage history of every event for the site's event pages (tasks/site): each decision
-- (`perfcampaign triage`, or the event's status taken by a series that joined it later) with its time, status
-- and note, and how many of the event's change points it set; newest first. The latest is the event's status.
-- grain: one row per (event_id, triaged_at, status, note)
-- upstream: detected_changes, change_triage
select
    detected_changes.campaign,
    detected_changes.event_id,
    change_triage.triaged_at,
    change_triage.status,
    change_triage.note,
    count(*) as change_points
from change_triage
join detected_changes using (change_id)
group by detected_changes.campaign, detected_changes.event_id, change_triage.triaged_at, change_triage.status,
    change_triage.note
order by detected_changes.campaign, detected_changes.event_id, change_triage.triaged_at desc, change_triage.status
