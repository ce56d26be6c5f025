-- Report query: the events of every campaign for their site pages and the event pages (tasks/site), newest first,
-- with the triage note of their change points (one, when they agree) and when they were triaged.
-- grain: one row per event_id
-- upstream: change_events, change_points
with notes as (
    select event_id, string_agg(distinct triage_note, '; ') as triage_note, max(triaged_at) as triaged_at
    from change_points
    group by event_id
)

select
    change_events.campaign, change_events.event_id, change_events.scenario, change_events.plan_id, change_events.run_id,
    change_events.run_started_at, change_events.previous_run_id, change_events.kind, change_events.direction,
    change_events.series, change_events.sides, change_events.metrics, change_events.change_pct,
    change_events.largest_change_pct, change_events.status, change_events.untriaged, change_events.label_changes,
    change_events.first_detected_in, notes.triage_note, notes.triaged_at
from change_events
left join notes using (event_id)
order by change_events.campaign, change_events.run_started_at desc, change_events.series desc, change_events.event_id
