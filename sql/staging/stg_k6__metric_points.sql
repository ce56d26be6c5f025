-- The points of one k6 `--out json` file that are custom metrics (anything k6 does not emit itself) or
-- dropped_iterations, with the type the file's Metric line declares (trend, rate, counter, gauge).
-- Requests (http_req_duration) are read by stg_k6__points; k6's other built-in metrics are not kept.
-- materialized: view
-- grain: none (one row per point)
-- upstream: raw_k6_metrics, k6_kept_metric
-- raw_k6_metrics: view made by tasks/warehouse/sources/k6.py: the file read by DuckDB's JSON reader with
-- explicit columns and ignore_errors (malformed lines are counted by the request pass).
with lines as (
    select type, metric, data from raw_k6_metrics where type in ('Metric', 'Point')
),

types as (
    select metric, any_value(data.type) as metric_type from lines where type = 'Metric' group by metric
),

points as (
    select metric, try_cast(data.time as timestamptz) as emitted_at, data.value as value, data.tags.name as label
    from lines
    where
        type = 'Point' and k6_kept_metric(metric)
),

final as (
    select points.metric, types.metric_type, points.label, points.emitted_at, points.value
    from points
    left join types using (metric)
)

select * from final
