-- Appends one source's staged requests to request_facts, each placed in its iteration: start <= started_at
-- < end, or the source's pinned one. A request in no iteration keeps iteration = null: it is kept and
-- counted, never dropped.
-- materialized: incremental
-- grain: none (one row per logged request)
-- upstream: stg_requests, load_context, iteration_buckets
-- stg_requests: the source's staging view under one name (tasks/warehouse/sources/base.py: load_requests).
-- load_context: that source's run_id, source_key and pinned iteration.
with staged as (
    select *, epoch_us(started_at) as started_us from stg_requests
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
        on staged.started_us // iteration_bucket_width_us((select run_id from context)) = buckets.bucket_no
        and staged.started_us >= buckets.start_us
        and staged.started_us < buckets.end_us
),

final as (
    select
        (select source_key from context) as source_key,
        label,
        method,
        started_at,
        elapsed_ms,
        status_code,
        is_error,
        bytes,
        iteration
    from placed
)

select * from final
