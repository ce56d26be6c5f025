-- Public view: every request of every run, server side (access logs) and client side (load tools).
-- materialized: view
-- grain: none (one row per request)
-- upstream: request_facts, sources
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
    sources.path as source_path
from request_facts as facts
join sources using (source_key)
