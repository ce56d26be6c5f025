-- Base tables written by the loader; marts are built from them. One row per thing the bundle holds.
-- All timestamps are UTC (timestamptz); a run is replaced as a whole when it is re-ingested.
create sequence if not exists source_key_seq start 1;

create table if not exists runs (
    run_id varchar not null,
    campaign varchar,
    scenario varchar,
    labels map(varchar, varchar),
    status varchar,
    status_reason varchar,
    timezone varchar,
    started_at timestamptz,
    ended_at timestamptz,
    ingested_at timestamptz,
    bundle_uri varchar,
    manifest json,
    unmapped_requests bigint,
    rejected_lines bigint
);

create table if not exists iterations (
    run_id varchar not null,
    iteration integer not null,
    started_at timestamptz not null,
    ended_at timestamptz not null,
    duration_s double not null,
    load json
);

create table if not exists requirements (
    run_id varchar not null,
    requirement_id varchar not null,
    metric varchar not null,
    op varchar not null,
    threshold double not null,
    side varchar not null,
    min_calls_per_s double
);
-- An iteration's warm-up (docs/bundle-format.md); duration_s is the time after it.
alter table iterations add column if not exists warmup_s double default 0;
-- Requests placed in the iteration by overlap: their stamp's interval is not wholly inside its window.
alter table iterations add column if not exists boundary_calls bigint default 0;
-- A requirement's scope (docs/bundle-format.md "Requirements"); added after the first release, hence the alter.
alter table requirements add column if not exists label varchar;
alter table requirements add column if not exists label_regex varchar;
alter table requirements add column if not exists host varchar;
alter table requirements add column if not exists role varchar;
alter table requirements add column if not exists k6_metric varchar;
alter table requirements add column if not exists unit varchar;
alter table requirements add column if not exists at_iteration integer;
alter table requirements add column if not exists at_load json;
-- The current expectation beside the spec (`threshold`), and the requirement's own slow-call threshold.
alter table requirements add column if not exists expect double;
alter table requirements add column if not exists slow_call_ms double;

-- One row per raw file of a bundle; source_key ties parsed rows back to their file.
create table if not exists sources (
    source_key integer not null,
    run_id varchar not null,
    kind varchar not null,
    host varchar not null,
    role varchar,
    side varchar,
    path varchar not null,
    pinned_iteration integer,
    sha256 varchar,
    size_bytes bigint,
    rows_loaded bigint,
    rows_rejected bigint
);
-- How finely the source's clock stamps a row, in µs (docs/warehouse.md, "Placing rows in iterations").
alter table sources add column if not exists resolution_us bigint;
-- Globs of the labels whose calls are background traffic in the run (the source's background_labels).
alter table sources add column if not exists background_labels varchar[];

-- Requests of every request-level source; the public view `requests` adds run_id, side and host.
create table if not exists request_facts (
    source_key integer not null,
    label varchar,
    method varchar,
    started_at timestamptz,
    elapsed_ms double,
    status_code integer,
    is_error boolean,
    bytes bigint,
    iteration integer
);

create table if not exists rejected_lines (
    run_id varchar not null,
    host varchar,
    path varchar,
    line_no bigint,
    reason varchar,
    excerpt varchar
);

-- The k6 end-of-test summary next to what the raw points give, metric by metric.
create table if not exists k6_summary_checks (
    run_id varchar not null,
    host varchar,
    path varchar,
    iteration integer,
    metric varchar,
    summary_value double,
    points_value double,
    agrees boolean
);

-- Facts about the warehouse itself (for example which version of the mart models built the marts).
create table if not exists warehouse_meta (
    key varchar not null,
    value varchar
);
