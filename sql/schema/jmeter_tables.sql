-- Base tables for JMeter artefacts other than samples. All timestamps UTC; replaced with the run.

-- The summariser timeline (`summary +` / `summary =` lines of jmeter.log or stdout), as JMeter printed it.
-- Each summariser (by name; a plan may have several, each counting every sample) prints its own lines.
-- A `+` line covers the window_s seconds before logged_at; a `=` line is the running total since start.
-- grain: one row per (run_id, path, line_no)
create table if not exists jmeter_summaries (
    run_id varchar not null,
    host varchar,
    path varchar,
    line_no bigint not null,
    logged_at timestamptz,
    summariser varchar,
    kind varchar not null,
    samples bigint,
    window_s integer,
    rate_per_s double,
    avg_ms double,
    min_ms double,
    max_ms double,
    errors bigint,
    error_pct double,
    active integer,
    started integer,
    finished integer,
    iteration integer
);
