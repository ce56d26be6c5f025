-- The request statistics each requirement is judged on: per requirement and iteration, over the requests
-- of its scope only (its side, narrowed by label glob or regex, host and the role of the source's host).
-- A background load's own results are side `background`, never part of a requirement's side.
-- Statistics are those of int_request_stats (exact linear quantiles; calls_per_s = calls / duration_s).
-- materialized: table
-- grain: requirement_id, iteration
-- upstream: requirements, iterations, request_facts, sources
with requirements as (
    select * from requirements where run_id = $run_id
),

requests as (
    select sources.side, sources.host, sources.role, facts.label, facts.iteration, facts.elapsed_ms, facts.is_error
    from request_facts as facts
    join sources using (source_key)
    where sources.run_id = $run_id and facts.iteration is not null
),

scoped as (
    select requirements.requirement_id, requests.iteration, requests.elapsed_ms, requests.is_error
    from requirements
    join requests
        on requests.side = requirements.side
        and (requirements.host is null or requests.host = requirements.host)
        and (requirements.role is null or requests.role = requirements.role)
        and (requirements.label is null or requests.label glob requirements.label)
        and (requirements.label_regex is null or regexp_full_match(requests.label, requirements.label_regex))
),

grouped as (
    select
        requirement_id,
        iteration,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        avg(elapsed_ms) as avg_ms,
        quantile_cont(elapsed_ms, [0.5, 0.9, 0.95, 0.99]) as quantiles_ms,
        max(elapsed_ms) as max_ms
    from scoped
    group by requirement_id, iteration
),

final as (
    select
        grouped.requirement_id,
        grouped.iteration,
        grouped.calls,
        grouped.errors / grouped.calls as error_rate,
        grouped.calls / iterations.duration_s as calls_per_s,
        grouped.avg_ms,
        grouped.quantiles_ms[1] as p50_ms,
        grouped.quantiles_ms[2] as p90_ms,
        grouped.quantiles_ms[3] as p95_ms,
        grouped.quantiles_ms[4] as p99_ms,
        grouped.max_ms
    from grouped
    join iterations on iterations.run_id = $run_id and iterations.iteration = grouped.iteration
)

select * from final
