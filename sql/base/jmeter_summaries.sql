-- Places every summariser line in its iteration by the time it was logged, by the one rule
-- (sql/macros/place_in_iterations.sql); a line in no iteration (or without a time) keeps iteration = null.
-- materialized: incremental
-- grain: run_id, path, line_no
-- upstream: stg_jmeter__summaries, load_context, placed_in_iterations
with final as (
    select
        (select run_id from load_context) as run_id,
        (select host from load_context) as host,
        (select path from load_context) as path,
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
    from placed_in_iterations('stg_jmeter__summaries', epoch_us(logged_at))
)

select * from final
