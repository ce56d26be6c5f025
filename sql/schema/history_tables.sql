-- Base tables of the nightly history (tasks/history). Not keyed by the runs a re-ingest replaces: what a
-- person decided (triage, exclusions) survives re-ingests and mart rebuilds; the analysis rewrites its
-- campaign's detected changes in one transaction after every ingest or validation of one of its runs.

-- Runs a person marked invalid (`perfcampaign exclude RUN_ID --note`): in no series (view history_exclusions).
-- grain: one row per run_id
create table if not exists run_exclusions (
    run_id varchar not null,
    note varchar not null,
    excluded_at timestamptz not null
);

-- A person's verdicts on a change point (`perfcampaign triage CHANGE_ID`): acknowledged, expected or invalid.
-- Every decision is kept (its time and note): the change's status is its latest row (by triaged_at), the
-- earlier ones are its triage history (the site's event pages show it).
-- grain: one row per (change_id, triaged_at)
create table if not exists change_triage (
    change_id varchar not null,
    status varchar not null,
    note varchar,
    triaged_at timestamptz not null
);

-- Change points and outliers the last analysis of each campaign found (the view change_points adds triage).
-- grain: one row per change_id
create table if not exists detected_changes (
    change_id varchar not null,
    campaign varchar not null,
    scenario varchar,
    plan_id varchar,
    side varchar,
    host varchar,
    iteration integer,
    label varchar,
    metric varchar,
    run_id varchar not null,
    run_started_at timestamptz,
    previous_run_id varchar,
    before_value double,
    after_value double,
    change_pct double,
    direction varchar,
    p_value double,
    kind varchar,
    label_changes varchar,
    first_detected_in varchar,
    detected_at timestamptz
);
-- the event (view change_events) a change point is part of: one shift of many series is one event
alter table detected_changes add column if not exists event_id varchar;
-- what found it: `series` (the series alone) or the group whose pooled series showed it (docs/history.md)
alter table detected_changes add column if not exists found_by varchar;
-- fewer than settle_runs runs on a side of it: not claimed yet (status pending)
alter table detected_changes add column if not exists pending boolean;
-- false for an extreme (max_ms) unless history.alert_extremes: shown, never announced (status quiet)
alter table detected_changes add column if not exists alerted boolean;
