-- Appends one k6 source's metric points (stg_k6__metric_points) to k6_metric_points, each placed in its
-- iteration as requests are (start <= emitted_at < end, or the source's pinned one; NULL in none: kept).
-- materialized: incremental
-- grain: none (one row per point)
-- upstream: stg_k6__metric_points, load_context, iteration_buckets
with staged as (
    select *, epoch_us(emitted_at) as at_us from stg_k6__metric_points
),

context as (
    select * from load_context
),

placed as (
    select
        staged.*,
        coalesce((select pinned_iteration from context), buckets.iteration) as iteration
    from staged
    left join iteration_buckets((select run_id from context)) as buckets
        on staged.at_us // iteration_bucket_width_us((select run_id from context)) = buckets.bucket_no
        and staged.at_us >= buckets.start_us
        and staged.at_us < buckets.end_us
),

final as (
    select (select source_key from context) as source_key, metric, metric_type, label, emitted_at, value, iteration
    from placed
)

select * from final
