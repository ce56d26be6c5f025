-- Public view: the change points and one-night outliers of the history series (docs/history.md), as the last
-- analysis of each campaign found them, with a person's triage. Untriaged, a change is `pending` while it has
-- fewer than settle_runs runs on a side, `quiet` when its metric is not announced (max_ms), else `new`.
-- The triage is the latest of the change's decisions (change_triage keeps every one).
-- materialized: view
-- grain: change_id
-- upstream: detected_changes, change_triage
with latest_triage as (
    select * from change_triage
    qualify row_number() over (partition by change_id order by triaged_at desc) = 1
),

final as (
    select
        detected_changes.* exclude (detected_at, first_detected_in),
        coalesce(latest_triage.status, case
            when detected_changes.pending then 'pending'
            when not coalesce(detected_changes.alerted, true) then 'quiet'
            else 'new'
        end) as status,
        latest_triage.note as triage_note,
        latest_triage.triaged_at,
        detected_changes.first_detected_in,
        detected_changes.detected_at
    from detected_changes
    left join latest_triage using (change_id)
)

select * from final
