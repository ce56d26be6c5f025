-- Data expectations on requests, one row per request source: how many, how long, and how many fall
-- outside the run. Requests of a host whose clock is corrected (clock_skew.is_corrected) are judged by
-- their corrected time (started_at - skew_s), as they are placed in iterations.
-- The expectations test these aggregates rather than millions of request rows: the same checks, exact,
-- at a size pandas and Great Expectations handle for any run.
-- grain: one row per (run_id, source_path)
-- upstream: runs, sources, request_facts, clock_skew
-- Epoch microseconds: no per-row timestamptz arithmetic (ICU, ~1 s per million rows).
with run as (
    select
        epoch_us(started_at) - round($run_margin_s * 1e6)::bigint as from_us,
        epoch_us(ended_at) + round($run_margin_s * 1e6)::bigint as to_us
    from runs
    where run_id = $run_id
),

request_sources as (
    select source_key, side, host, path as source_path
    from sources
    where run_id = $run_id and side in ('server', 'client')
),

corrections as (
    select host, skew_s from clock_skew where run_id = $run_id and is_corrected
),

facts as (
    select
        request_sources.source_key,
        epoch_us(facts.started_at) - coalesce(round(corrections.skew_s * 1e6), 0)::bigint as placed_us,
        facts.elapsed_ms
    from request_facts as facts
    join request_sources using (source_key)
    left join corrections on request_sources.side = 'server' and corrections.host = request_sources.host
),

per_source as (
    select
        facts.source_key,
        count(*) as calls,
        count(*) filter (where facts.placed_us is null) as calls_without_time,
        count(*) filter (where facts.elapsed_ms < 0) as negative_elapsed,
        min(facts.elapsed_ms) as min_elapsed_ms,
        to_timestamp(min(facts.placed_us) / 1e6) as first_at,
        to_timestamp(max(facts.placed_us) / 1e6) as last_at,
        count(*) filter (
            where facts.placed_us is null or facts.placed_us < run.from_us or facts.placed_us >= run.to_us
        ) as outside_run
    from facts
    cross join run
    group by facts.source_key
),

final as (
    select
        request_sources.side,
        request_sources.host,
        request_sources.source_path,
        coalesce(per_source.calls, 0) as calls,
        coalesce(per_source.calls_without_time, 0) as calls_without_time,
        coalesce(per_source.negative_elapsed, 0) as negative_elapsed,
        per_source.min_elapsed_ms,
        per_source.first_at,
        per_source.last_at,
        coalesce(per_source.outside_run, 0) as outside_run,
        round(100.0 * coalesce(per_source.outside_run, 0) / nullif(per_source.calls, 0), 3) as outside_run_pct
    from request_sources
    left join per_source using (source_key)
)

select * from final order by side, host, source_path
