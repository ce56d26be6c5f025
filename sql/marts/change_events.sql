-- Public view: one row per event: the change points of one campaign, scenario and plan, of one kind and
-- direction, at one run or the runs next to it (docs/history.md, "Events"). A shift of the system moves
-- many series at once; it is one event to triage and to be told about. The per-series rows stay in
-- change_points (column event_id). `found_by`: `series` and/or the groups whose pooled series found its members.
-- materialized: view
-- grain: event_id
-- upstream: change_points, runs
with per_run as (
    select event_id, run_id, run_started_at, count(*) as series_at_run
    from change_points
    group by all
),

at_run as (  -- the event's run: where most of its series moved (the earliest on a tie)
    select event_id, first(run_id order by series_at_run desc, run_started_at, run_id) as run_id
    from per_run
    group by event_id
),

members as (
    select change_points.*, at_run.run_id as event_run_id, detected.started_at as detected_run_started_at
    from change_points
    join at_run using (event_id)
    left join runs as detected on detected.run_id = change_points.first_detected_in
)

select
    event_id,
    any_value(campaign) as campaign,
    any_value(scenario) as scenario,
    any_value(plan_id) as plan_id,
    any_value(event_run_id) as run_id,
    any_value(run_started_at) filter (where run_id = event_run_id) as run_started_at,
    any_value(previous_run_id) filter (where run_id = event_run_id) as previous_run_id,
    any_value(kind) as kind,
    any_value(direction) as direction,
    count(*) as series,
    count(distinct run_id) as runs,
    median(change_pct) as change_pct,
    first(change_pct order by abs(change_pct) desc nulls first) as largest_change_pct,
    string_agg(distinct side, ', ' order by side) as sides,
    string_agg(distinct metric, ', ' order by metric) as metrics,
    case  -- untriaged first: new, then pending, then quiet
        when count(*) filter (where status = 'new') > 0 then 'new'
        when count(*) filter (where status = 'pending') > 0 then 'pending'
        when count(*) filter (where status = 'quiet') > 0 then 'quiet'
        when count(distinct status) = 1 then any_value(status)
        else 'mixed'
    end as status,
    count(*) filter (where status in ('new', 'pending', 'quiet')) as untriaged,
    string_agg(distinct found_by, '; ' order by found_by) as found_by,
    any_value(label_changes) filter (where run_id = event_run_id) as label_changes,
    first(first_detected_in order by detected_run_started_at, first_detected_in) as first_detected_in,
    list(side || ' ' || host || ' it ' || iteration || ' ' || label || ' ' || metric
         order by metric, side, host, iteration, label) as series_keys
from members
group by event_id
