-- The run's requests counted by side and iteration, for what the ingest records of the whole run
-- (runs.unmapped_requests: no iteration; iterations.boundary_calls: placed by overlap; the requests of each side
-- it reports). A counted side's come from int_request_counts' `total` grain, which the same read of its rows
-- made; only the sides whose durations are sorted (k6's) are read here, as the marts read them anyway. Read
-- apart, every row again cost 0.24 s of a 3 M-line access-log ingest into a fresh warehouse, where a scan of the
-- rows just written runs on one thread (docs/performance.md).
-- materialized: table
-- grain: side, iteration
-- upstream: requests, int_request_paths, int_request_counts
with counted as (
    select
        side, iteration, sum(calls)::bigint as calls,
        coalesce(sum(calls) filter (where is_boundary), 0)::bigint as boundary_calls
    from int_request_counts
    where grain = 'total'
    group by side, iteration
),

sorted as (
    select side, iteration, count(*) as calls, count(*) filter (where is_boundary) as boundary_calls
    from requests
    where run_id = $run_id and side in (select side from int_request_paths where not is_by_counts)
    group by side, iteration
),

final as (
    select * from counted
    union all by name
    select * from sorted
)

select * from final
