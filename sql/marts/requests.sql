-- Public view: every request of every run, server side (access logs) and client side (load tools).
-- `is_warmup`: the request started in its iteration's warm-up: kept, left out of its statistics. The test is
-- the in_warmup macro's, written out (a public view must work on any DuckDB connection, which has no
-- macros), on the time that placed the row: written time - skew for a host whose clock was corrected.
-- materialized: view
-- grain: none (one row per request)
-- upstream: request_facts, sources, iterations, clock_skew
select
    sources.run_id,
    sources.side,
    sources.host,
    facts.label,
    facts.method,
    facts.started_at,
    facts.elapsed_ms,
    facts.status_code,
    facts.is_error,
    facts.bytes,
    facts.iteration,
    sources.path as source_path,
    coalesce(
        iterations.warmup_s > 0
        and epoch_us(facts.started_at) - coalesce(round(skews.skew_s * 1000000)::bigint, 0)
            < epoch_us(iterations.started_at) + round(iterations.warmup_s * 1000000)::bigint,
        false
    ) as is_warmup,
    sources.role
from request_facts as facts
join sources using (source_key)
left join iterations on iterations.run_id = sources.run_id and iterations.iteration = facts.iteration
left join clock_skew as skews
    on skews.run_id = sources.run_id and skews.host = sources.host and skews.is_corrected
    and sources.side = 'server' and sources.pinned_iteration is null
