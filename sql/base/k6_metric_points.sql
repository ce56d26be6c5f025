-- Appends one k6 source's metric points (stg_k6__metric_points) to k6_metric_points, each placed in its
-- iteration by the one rule (sql/macros/place_in_iterations.sql; NULL in none: kept).
-- materialized: incremental
-- grain: none (one row per point)
-- upstream: stg_k6__metric_points, load_context, placed_in_iterations
with final as (
    select (select source_key from load_context) as source_key, metric, metric_type, label, emitted_at, value, iteration
    from placed_in_iterations('stg_k6__metric_points', epoch_us(emitted_at))
)

select * from final
