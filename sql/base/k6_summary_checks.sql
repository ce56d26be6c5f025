-- One k6 end-of-test summary next to what the raw points of the same host and iteration give.
-- materialized: incremental
-- grain: run_id, path, metric
-- upstream: sources, request_facts
-- The summary's values come as bound lists ($metrics, $summary_values); the points are the rows of the
-- k6_json / k6_csv sources with the summary's host and pinned iteration.
-- Metric names: `http_reqs.count`, `http_req_duration.<stat>` (avg, min, max, med, count, p(N)),
-- `http_req_failed.rate`, `http_req_failed.passes` (k6 counts a failed request as a TRUE value, a
-- "pass" of the rate). Counts must be equal; other values agree within $rel_tolerance (k6 up to 1.1
-- sorts every value and interpolates linearly, as quantile_cont and numpy do, so they match to the
-- last digit; so linear here whatever the run's percentile_method). With no raw source to compare, points_value
-- and agrees are NULL.
with summary as (
    select
        unnest($metrics::varchar[]) as metric,
        unnest($summary_values::double[]) as summary_value
),

raw_sources as (
    select source_key
    from sources
    where
        run_id = $run_id
        and host = $host
        and kind in ('k6_json', 'k6_csv')
        and pinned_iteration is not distinct from $iteration::integer
),

raw as (
    select elapsed_ms, is_error
    from request_facts
    where source_key in (select source_key from raw_sources)
),

stats as (
    select
        count(*)::double as requests,
        count(elapsed_ms)::double as durations,
        avg(elapsed_ms) as avg_ms,
        min(elapsed_ms) as min_ms,
        max(elapsed_ms) as max_ms,
        quantile_cont(elapsed_ms, $probabilities::double[]) as quantiles_ms,
        count(*) filter (where is_error)::double as failed,
        avg(is_error::integer) as failed_rate
    from raw
),

points as (
    select 'http_reqs.count' as metric, requests as points_value from stats
    union all select 'http_req_duration.count', durations from stats
    union all select 'http_req_duration.avg', avg_ms from stats
    union all select 'http_req_duration.min', min_ms from stats
    union all select 'http_req_duration.max', max_ms from stats
    union all select 'http_req_failed.passes', failed from stats
    union all select 'http_req_failed.rate', failed_rate from stats
    union all
    select
        unnest($quantile_metrics::varchar[]) as metric,
        unnest(quantiles_ms) as points_value
    from stats
),

compared as (
    select
        summary.metric,
        summary.summary_value,
        case when exists (select 1 from raw_sources) then points.points_value end as points_value
    from summary
    left join points using (metric)
),

final as (
    select
        $run_id as run_id,
        $host as host,
        $path as path,
        $iteration::integer as iteration,
        metric,
        summary_value,
        points_value,
        case
            when not exists (select 1 from raw_sources) then null
            when points_value is null then false
            when metric in ('http_reqs.count', 'http_req_duration.count', 'http_req_failed.passes')
                then summary_value = points_value
            else abs(summary_value - points_value)
                <= $rel_tolerance * greatest(abs(summary_value), abs(points_value)) + 1e-12
        end as agrees
    from compared
)

select * from final
