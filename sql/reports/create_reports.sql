-- The published reports of each run (where `perfcampaign report` or a campaign put them); kept when a run
-- is re-ingested, since the files stay where they were published.
-- grain: one row per (run_id, uri)
create table if not exists reports (
    run_id varchar not null,
    uri varchar not null,
    created_at timestamptz not null
);
