-- Appends staged requests (one source's, or a batch of sources': each row carries its source_key) to request_facts, each placed in its iteration by the one rule
-- (sql/macros/place_in_iterations.sql). A request in no iteration keeps iteration = null: it is kept and
-- counted, never dropped.
-- materialized: incremental
-- grain: none (one row per logged request)
-- upstream: stg_requests, load_context, placed_in_iterations
-- stg_requests: the staging view under one name, with each row's source_key (tasks/warehouse/sources/base.py:
-- append_requests).
with final as (
    select
        source_key,
        label,
        method,
        started_at,
        elapsed_ms,
        status_code,
        is_error,
        bytes,
        iteration
    from placed_in_iterations('stg_requests', epoch_us(started_at))
)

select * from final
