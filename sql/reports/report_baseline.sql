-- Report query: the default baseline of a run, the latest earlier run of the same campaign and scenario
-- that passed: not failed or cancelled, and no requirement broken over the whole run; with a history, one of
-- the $comparable runs of its current segment, started at $not_before or later (report_segment.sql; null:
-- no such bound).
-- grain: at most one row
-- upstream: runs, verdicts
with this_run as (
    select campaign, scenario, started_at from runs where run_id = $run_id
),

candidates as (
    select runs.run_id, runs.started_at
    from runs
    join this_run using (campaign, scenario)
    where runs.run_id <> $run_id
        and runs.started_at < this_run.started_at
        and runs.status not in ('failed', 'cancelled')
        and ($not_before is null or runs.started_at >= $not_before)
        and ($comparable is null or list_contains($comparable, runs.run_id))
        and not exists (
            select 1 from verdicts
            where verdicts.run_id = runs.run_id and verdicts.iteration is null and verdicts.passed = false
        )
)

select run_id from candidates order by started_at desc limit 1
