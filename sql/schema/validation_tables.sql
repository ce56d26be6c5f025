-- Base tables of clock skew and data expectations. All timestamps UTC; replaced with the run (RUN_TABLES).

-- How far each server host's clock is from the reference clock (the load generator), measured from the
-- requests both sides logged (sql/base/clock_skew.sql). Filled by the ingest, in its transaction.
-- Positive skew_s: the host's clock is ahead of the reference. Rows of a host with is_corrected are placed
-- in iterations by (written time - skew_s); their times stay as written.
-- grain: one row per (run_id, host)
create table if not exists clock_skew (
    run_id varchar not null,
    host varchar not null,
    reference_host varchar,
    skew_s double,
    method varchar,
    uncertainty_s double,
    mismatch_share double,
    server_requests bigint,
    reference_requests bigint,
    threshold_s double,
    is_corrected boolean not null default false,
    requests_replaced bigint,
    samples_replaced bigint,
    note varchar
);
-- The fit of the clocks as written (lag 0), beside the best shift's mismatch_share: the evidence for a correction.
alter table clock_skew add column if not exists as_written_mismatch double;

-- One row per expectation evaluated on a run (tasks/validate/run.py, suites in expectations/). Replaced when
-- the run is validated again.
-- grain: one row per (run_id, suite, expectation)
create table if not exists expectation_results (
    run_id varchar not null,
    suite varchar not null,
    expectation varchar not null,
    expectation_type varchar,
    "column" varchar,
    severity varchar,
    success boolean,
    observed varchar,
    details json,
    validated_at timestamptz
);

-- The outcome of the last validation of each run: success is false when a critical expectation failed.
-- grain: one row per run_id
create table if not exists validations (
    run_id varchar not null,
    validated_at timestamptz not null,
    success boolean not null,
    evaluated_expectations integer,
    failed_expectations varchar[],
    warnings varchar[],
    page_path varchar
);
