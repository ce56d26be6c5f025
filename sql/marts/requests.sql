-- Public view: every request of every run, server side (access logs) and client side (load tools).
-- `is_warmup`: the request started in its iteration's warm-up: kept, left out of its statistics. The test is
-- the in_warmup macro's, written out (a public view must work on any DuckDB connection, which has no
-- macros), on the time that placed the row: written time - skew for a host whose clock was corrected.
-- `side`: the source's, or `background` for a call whose label a source of the run declares background
-- traffic (sources.background_labels, globs): kept out of every tested figure on both sides.
-- `is_boundary`: placed by overlap (sql/macros/place_in_iterations.sql): the interval its stamp stands for,
-- [placed time, + sources.resolution_us), is not wholly inside its iteration's window.
-- An iteration's bounds and a host's skew are worked out once (`windows`, `skews`), not per request: per request
-- they were most of a read of the view (3 M rows of a run: 0.24 s on one thread, now 0.16 s).
-- materialized: view
-- grain: none (one row per request)
-- upstream: request_facts, sources, iterations, clock_skew
with background as (
    select run_id, list(label_glob) as label_globs
    from (select run_id, unnest(background_labels) as label_glob from sources where background_labels is not null)
    group by run_id
),

skews as (
    select run_id, host, round(skew_s * 1000000)::bigint as skew_us
    from clock_skew
    where is_corrected
),

facts as (
    select
        facts.*,
        sources.run_id,
        case
            when background.label_globs is null then sources.side  -- most runs: no glob tested per row
            when len(list_filter(background.label_globs, lambda label_glob: facts.label glob label_glob)) > 0
                then 'background'
            else sources.side
        end as side,
        sources.host,
        sources.path as source_path,
        sources.role,
        sources.pinned_iteration,
        coalesce(sources.resolution_us, 0) as resolution_us,
        epoch_us(facts.started_at) - coalesce(skews.skew_us, 0) as placed_us
    from request_facts as facts
    join sources using (source_key)
    left join background on background.run_id = sources.run_id
    left join skews
        on skews.run_id = sources.run_id and skews.host = sources.host
        and sources.side = 'server' and sources.pinned_iteration is null
),

windows as (  -- each iteration's bounds in epoch microseconds, worked out once and not per request
    select
        run_id,
        iteration,
        epoch_us(started_at) as start_us,
        epoch_us(ended_at) as end_us,
        case when warmup_s > 0 then 2 * (epoch_us(started_at) + round(warmup_s * 1000000)::bigint) end
            as twice_warmup_end_us
    from iterations
)

select
    facts.run_id,
    facts.side,
    facts.host,
    facts.label,
    facts.method,
    facts.started_at,
    facts.elapsed_ms,
    facts.status_code,
    facts.is_error,
    facts.bytes,
    facts.iteration,
    facts.source_path,
    coalesce(
        2 * facts.placed_us + facts.resolution_us < windows.twice_warmup_end_us + sign(facts.resolution_us), false
    ) as is_warmup,
    facts.role,
    coalesce(
        facts.pinned_iteration is null
        and not (facts.placed_us >= windows.start_us and facts.placed_us + facts.resolution_us <= windows.end_us),
        false
    ) as is_boundary
from facts
left join windows on windows.run_id = facts.run_id and windows.iteration = facts.iteration
