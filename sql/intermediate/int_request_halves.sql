-- The iteration that halves a run's counted requests (the sides int_request_paths counts), for int_request_counts to
-- read them in two scans: up to it, and after it (with the rows of no iteration). DuckDB scans a table with
-- `committed rows / 122,880 + 1` threads, so the rows an ingest just wrote, not yet committed, are read on one thread;
-- two scans of a union run side by side, and with the iteration a constant each skips the other half's row groups by
-- their zone maps (rows are written in the order of their file, which is time's). docs/performance.md, "Counts in two
-- halves".
-- Counted from request_facts per source, as int_request_paths decides, not through the `requests` view: a source's
-- background calls count on its own side here; the split only balances the halves, either half may hold any row.
-- materialized: parameters
-- grain: none (one row: the split)
-- upstream: sources, request_facts, int_request_paths
with per_iteration as (
    select iteration, count(*) as requests
    from request_facts
    where iteration is not null and source_key in (
        select source_key
        from sources
        where run_id = $run_id and side in (select side from int_request_paths where is_by_counts)
    )
    group by iteration
),

running as (
    select iteration, sum(requests) over (order by iteration) as up_to, sum(requests) over () as total
    from per_iteration
),

final as (
    select coalesce(arg_min(iteration, abs(2 * up_to - total)), 0) as split_iteration
    from running
)

select * from final
