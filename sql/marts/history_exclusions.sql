-- Public view: runs that are in no history series, and why: a run that failed or was cancelled, whose data
-- failed a critical expectation (its last validation), or that a person marked invalid (`perfcampaign exclude`).
-- materialized: view
-- grain: run_id, cause
-- upstream: runs, validations, run_exclusions
with runs as (
    select run_id, campaign, scenario, started_at, status, status_reason from runs
),

causes as (
    select run_id, status as cause, 'run ' || status || coalesce(': ' || status_reason, '') as reason
    from runs
    where status in ('failed', 'cancelled')
    union all
    select run_id, 'data' as cause,
        'critical data expectations failed: ' || array_to_string(failed_expectations, ', ') as reason
    from validations
    where not success
    union all
    select run_id, 'person' as cause, 'marked invalid: ' || note as reason
    from run_exclusions
),

final as (
    select runs.campaign, runs.scenario, runs.run_id, runs.started_at as run_started_at, causes.cause, causes.reason
    from causes
    join runs using (run_id)
)

select * from final
