-- Data expectations on status codes: one row per status code a request source logged, with its calls.
-- A NULL status_code is a request the reader found no code for.
-- grain: one row per (run_id, source_path, status_code)
-- upstream: sources, request_facts
with request_sources as (
    select source_key, side, host, path as source_path
    from sources
    where run_id = $run_id and side in ('server', 'client')
),

final as (
    select
        request_sources.side,
        request_sources.host,
        request_sources.source_path,
        facts.status_code,
        count(*) as calls
    from request_facts as facts
    join request_sources using (source_key)
    group by all
)

select * from final order by side, host, source_path, status_code
