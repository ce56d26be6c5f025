-- Places every staged request in its iteration: start <= started_at < end, or the source's pinned one.
-- A request in no iteration keeps iteration = null: it is kept and counted, never dropped.
-- grain: one row per request of one source
-- upstream: stg_requests (one source's staged relation), load_context (that source's run_id, key, pin),
--           iterations
with staged as (
    select * from stg_requests
),

context as (
    select * from load_context
),

windows as (
    select iteration, started_at as window_start, ended_at as window_end
    from iterations
    where run_id = (select run_id from context)
),

-- A plain range join: iterations never overlap, so a request matches at most one window. (An ASOF join
-- gives the same rows but held 3.5 GB for 10 M requests; this one streams, FIELD-NOTES.)
placed as (
    select
        staged.*,
        coalesce((select pinned_iteration from context), windows.iteration) as iteration
    from staged
    left join windows
        on staged.started_at >= windows.window_start and staged.started_at < windows.window_end
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
