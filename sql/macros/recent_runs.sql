-- The last `last_runs` runs of a run's campaign and scenario up to the run itself (its History section's
-- window: report_changes, report_events).
-- upstream: runs
create or replace temp macro recent_runs(this_run_id, last_runs) as table
    select runs.run_id
    from runs
    join (select campaign, scenario, started_at from runs where run_id = this_run_id) as this_run
        using (campaign, scenario)
    where runs.started_at <= this_run.started_at
    order by runs.started_at desc
    limit last_runs;
