-- Places every summariser line in its iteration by the time it was logged (start <= logged_at < end), or
-- in the source's pinned iteration; a line in no iteration (or without a time) keeps iteration = null.
-- materialized: incremental
-- grain: run_id, path, line_no
-- upstream: stg_jmeter__summaries, load_context, iteration_buckets
-- load_context: run_id, pinned_iteration, host and path of the log.
with staged as (
    select *, epoch_us(logged_at) as logged_us from stg_jmeter__summaries
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
        on staged.logged_us // iteration_bucket_width_us((select run_id from context)) = buckets.bucket_no
        and staged.logged_us >= buckets.start_us
        and staged.logged_us < buckets.end_us
),

final as (
    select
        (select run_id from context) as run_id,
        (select host from context) as host,
        (select path from context) as path,
        line_no,
        logged_at,
        summariser,
        kind,
        samples,
        window_s,
        rate_per_s,
        avg_ms,
        min_ms,
        max_ms,
        errors,
        error_pct,
        active,
        started,
        finished,
        iteration
    from placed
)

select * from final
