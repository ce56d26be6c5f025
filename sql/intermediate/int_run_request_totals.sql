-- The run's requests counted once by side and iteration, for what the ingest records of the whole run
-- (runs.unmapped_requests: no iteration; iterations.boundary_calls: placed by overlap; the requests of each side
-- it reports): one read of the rows for the three, each of which read them all before (0.8 s of a 10 M-row ingest
-- into a fresh warehouse, where a scan of the rows just written runs on one thread: docs/performance.md).
-- materialized: table
-- grain: side, iteration
-- upstream: requests
with final as (
    select side, iteration, count(*) as calls, count(*) filter (where is_boundary) as boundary_calls
    from requests
    where run_id = $run_id
    group by side, iteration
)

select * from final
