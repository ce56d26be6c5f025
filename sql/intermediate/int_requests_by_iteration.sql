-- Places every staged request in its iteration: start <= started_at < end, or the source's pinned one.
-- A request in no iteration keeps iteration = null: it is kept and counted, never dropped.
-- grain: one row per request of one source
-- upstream: stg_requests (one source's staged relation), load_context (that source's run_id, key, pin),
--           iteration_buckets (sql/macros)
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
