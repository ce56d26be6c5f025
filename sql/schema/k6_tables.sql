-- Base tables for k6 output other than requests. All timestamps UTC; replaced with the run (by source_key).

-- Points of the k6 metrics a requirement may judge that are not requests: custom metrics (Trend, Rate,
-- Counter, Gauge, from `--out json`) and k6's dropped_iterations. `metric_type` comes from the file's own
-- Metric line; `label` is the point's `name` tag, when it has one. Placed in iterations as requests are.
-- grain: none (one row per point)
create table if not exists k6_metric_points (
    source_key integer not null,
    metric varchar not null,
    metric_type varchar,
    label varchar,
    emitted_at timestamptz,
    value double,
    iteration integer
);
