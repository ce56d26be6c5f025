-- Data expectations on background load: a request source whose manifest entry declares
-- `declared_rate_per_s` (the log of a background load) ran at that rate in every iteration. One row per
-- (source, iteration); no rows when the run declares no background load.
-- grain: one row per (run_id, source_path, iteration)
-- Calls in an iteration's warm-up are left out, as duration_s leaves its seconds out.
-- upstream: runs (manifest), sources, iterations, requests
with declared as (
    select
        entry ->> 'path' as source_path,
        entry ->> 'host' as host,
        try_cast(entry ->> 'declared_rate_per_s' as double) as declared_rate_per_s
    from (select unnest(from_json(manifest -> 'sources', '["json"]')) as entry from runs where run_id = $run_id)
    where entry ->> 'declared_rate_per_s' is not null
),

background_sources as (
    select sources.source_key, declared.*
    from declared
    join sources on sources.run_id = $run_id and sources.path = declared.source_path and sources.host = declared.host
),

windows as (
    select iteration, duration_s from iterations where run_id = $run_id
),

calls as (
    select background_sources.source_key, facts.iteration, count(*) as calls
    from requests as facts
    join background_sources
        on facts.host = background_sources.host and facts.source_path = background_sources.source_path
    where facts.run_id = $run_id and facts.iteration is not null and not facts.is_warmup
    group by all
),

final as (
    select
        background_sources.host,
        background_sources.source_path,
        windows.iteration,
        background_sources.declared_rate_per_s,
        coalesce(calls.calls, 0) as calls,
        round(coalesce(calls.calls, 0) / windows.duration_s, 3) as calls_per_s,
        round(100 * abs(coalesce(calls.calls, 0) / windows.duration_s / background_sources.declared_rate_per_s - 1), 3)
            as deviation_pct
    from background_sources
    cross join windows
    left join calls on calls.source_key = background_sources.source_key and calls.iteration = windows.iteration
)

select * from final order by source_path, iteration
