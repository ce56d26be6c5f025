-- Places every summariser line in its iteration by the time it was logged (start <= logged_at < end), or
-- in the source's pinned iteration; a line in no iteration (or without a time) keeps iteration = null.
-- grain: one row per (run_id, path, line_no)
-- upstream: stg_jmeter__summaries (one log's staging view), load_context (run_id, pinned_iteration, host,
--           path of that log), iterations
insert into jmeter_summaries
with staged as (
    select * from stg_jmeter__summaries
),

context as (
    select * from load_context
),

windows as (
    select iteration, started_at as window_start, ended_at as window_end
    from iterations
    where run_id = (select run_id from context)
),

placed as (
    select
        staged.*,
        coalesce(
            (select pinned_iteration from context),
            case when staged.logged_at < windows.window_end then windows.iteration end
        ) as iteration
    from staged
    asof left join windows on staged.logged_at >= windows.window_start
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
