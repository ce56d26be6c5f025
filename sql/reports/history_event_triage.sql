-- Statement: a change point this analysis found first ($run_id) joins an event that a person triaged
-- before: it takes the event's status and note, so a shift triaged once stays triaged as more of its series
-- follow. Only when every earlier member of the event is triaged, all with one status (a triage of a few
-- series alone is no word on the rest). A change's status is its latest triage (change_triage keeps every one).
-- grain: one row per change_id (inserted into change_triage)
-- upstream: detected_changes, change_triage
insert into change_triage
with latest as (
    select * from change_triage
    qualify row_number() over (partition by change_id order by triaged_at desc) = 1
),

members as (
    select detected_changes.event_id, detected_changes.change_id, detected_changes.first_detected_in = $run_id as joined,
        latest.status, latest.note
    from detected_changes
    left join latest using (change_id)
    where detected_changes.campaign = $campaign
),

triaged_events as (
    select event_id, any_value(status) as status, any_value(note) as note
    from members
    where not joined
    group by event_id
    having count(*) = count(status) and count(distinct status) = 1
)

select members.change_id, triaged_events.status, triaged_events.note, $at as triaged_at
from members
join triaged_events using (event_id)
where members.joined and members.status is null
