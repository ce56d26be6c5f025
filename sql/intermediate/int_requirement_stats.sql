-- The figures each requirement is judged on: per requirement and iteration, over the samples of its scope
-- only. A request requirement's samples are the requests of its side, narrowed by label glob or regex,
-- host and the role of the source's host (value = elapsed_ms); a k6 metric's are that metric's points
-- (k6_metric_points, value = the point's value), narrowed the same way (label = the point's `name` tag).
-- A background load's own results are side `background`, never part of a requirement's side.
-- Statistics are those of int_request_stats (exact percentiles by the run's percentile_method), taken the same two
-- ways: from the counts of distinct values where values repeat, by sorting where they are nearly unique. A request
-- requirement on a counted side (int_request_paths: millisecond logs, whose 100 M requests a sort would hold,
-- 1.9 GB) reads int_request_counts, no request row: a requirement adds next to nothing to an ingest. The samples of a
-- sorted side and of a k6 metric are read as rows, and counted where their values repeat (>= 10 samples per
-- distinct value in the requirement's scope).
-- `samples_per_s` = samples / duration_s.
-- `dropped`: the calls offered and never made, which carry no label and reached no server: a whole side's
-- are iteration_summary.dropped (k6 dropped_iterations, a JMeter plan's shortfall; a server side shows its
-- clients'), a client requirement of a host or role counts the dropped_iterations of those load generators.
-- `error_rate_with_dropped` = (errors + dropped) / (samples + dropped).
-- `slow_calls`: the requests of the scope at or over `slow_call_ms`, the requirement's own, else the manifest's
-- thresholds.slow_call_ms (default 1000); null for a k6 metric (its points are not calls).
-- materialized: table
-- grain: requirement_id, iteration
-- Rows in an iteration's warm-up are left out (requests.is_warmup, int_k6_points.is_warmup), and duration_s is
-- the time after it.
-- upstream: requirements, iterations, requests, int_request_paths, int_request_counts, int_k6_points,
--   iteration_summary, quantile_from_counts_by, quantile_by, percentile_method, runs
with settings as (
    select percentile_method(manifest) as percentile_method from runs where run_id = $run_id
),

requirements as (
    select
        requirements.*,
        case when requirements.k6_metric is null then coalesce(
            requirements.slow_call_ms, (runs.manifest -> 'thresholds' ->> 'slow_call_ms')::double, 1000
        ) end as slow_at_ms
    from requirements
    join runs using (run_id)
    where requirements.run_id = $run_id
),

samples as not materialized (  -- read through scoped three times: never held
    select side, host, role, null as k6_metric, label, iteration, elapsed_ms as value, is_error
    from requests
    where run_id = $run_id and iteration is not null and not is_warmup
        and side in (select side from int_request_paths where not is_by_counts)
    union all
    select 'client' as side, host, role, metric as k6_metric, label, iteration, value, null as is_error
    from int_k6_points
    where side is distinct from 'background' and iteration is not null and not is_warmup
),

dropped as (
    select requirements.requirement_id, summary.iteration, summary.dropped
    from requirements
    join iteration_summary as summary on summary.run_id = $run_id and summary.side = requirements.side
    where requirements.k6_metric is null and requirements.host is null and requirements.role is null
    union all
    select requirements.requirement_id, points.iteration, sum(points.value)
    from requirements
    join int_k6_points as points
        on points.metric = 'dropped_iterations'
        and points.side = 'client'
        and (requirements.host is null or points.host = requirements.host)
        and (requirements.role is null or points.role = requirements.role)
    where
        requirements.k6_metric is null and requirements.side = 'client'
        and (requirements.host is not null or requirements.role is not null)
        and points.iteration is not null and not points.is_warmup
    group by all
),

scoped as not materialized (  -- read three times: never held in memory
    select requirements.requirement_id, samples.iteration, samples.value, samples.is_error, requirements.slow_at_ms
    from requirements
    join samples
        on samples.side = requirements.side
        and samples.k6_metric is not distinct from requirements.k6_metric
        and (requirements.host is null or samples.host = requirements.host)
        and (requirements.role is null or samples.role = requirements.role)
        and (requirements.label is null or samples.label glob requirements.label)
        and (requirements.label_regex is null or regexp_full_match(samples.label, requirements.label_regex))
),

by_counts as (
    select requirement_id, approx_count_distinct(value) * 10 <= count(*) as is_by_counts
    from scoped
    group by requirement_id
),

counted as (  -- a request requirement's samples on a counted side
    select
        requirements.requirement_id, counts.iteration, counts.elapsed_ms as value, sum(counts.calls) as samples,
        sum(counts.errors) as errors, any_value(requirements.slow_at_ms) as slow_at_ms
    from requirements
    join int_request_counts as counts
        on counts.grain = 'iteration'
        and counts.side = requirements.side
        and (requirements.host is null or counts.host = requirements.host)
        and (requirements.role is null or counts.role = requirements.role)
        and (requirements.label is null or counts.label glob requirements.label)
        and (requirements.label_regex is null or regexp_full_match(counts.label, requirements.label_regex))
    where requirements.k6_metric is null and counts.iteration is not null and not counts.is_warmup
    group by all
),

by_value as (
    select * from counted
    union all by name
    select
        requirement_id, iteration, value, count(*) as samples, count(*) filter (where is_error) as errors,
        any_value(slow_at_ms) as slow_at_ms
    from scoped
    where requirement_id in (select requirement_id from by_counts where is_by_counts)
    group by all
),

ranked as (
    select
        *,
        -- NULL values sort last, so they never count towards the ranks of the others
        sum(samples) over (partition by requirement_id, iteration order by value
                           rows between unbounded preceding and current row) as running_samples,
        sum(samples) filter (where value is not null) over (partition by requirement_id, iteration) - 1 as last_rank
    from by_value
),

grouped_by_counts as (
    select
        requirement_id,
        iteration,
        sum(samples)::bigint as samples,
        sum(errors)::bigint as errors,
        (sum(samples) filter (where value >= slow_at_ms))::bigint as slow_calls,
        any_value(slow_at_ms) as slow_call_ms,
        sum(value * samples) / sum(samples) filter (where value is not null) as avg_value,
        [
            quantile_from_counts_by((select percentile_method from settings), value, running_samples, last_rank, 0.5),
            quantile_from_counts_by((select percentile_method from settings), value, running_samples, last_rank, 0.9),
            quantile_from_counts_by((select percentile_method from settings), value, running_samples, last_rank, 0.95),
            quantile_from_counts_by((select percentile_method from settings), value, running_samples, last_rank, 0.99)
        ] as quantiles,
        min(value) as min_value,
        max(value) as max_value,
        sum(value * samples) as total,
        sum((value <> 0)::integer * samples) / sum(samples) filter (where value is not null) as nonzero_share
    from ranked
    group by requirement_id, iteration
),

grouped_by_sorting as (
    select
        requirement_id,
        iteration,
        count(*) as samples,
        count(*) filter (where is_error) as errors,
        count(*) filter (where value >= slow_at_ms) as slow_calls,
        any_value(slow_at_ms) as slow_call_ms,
        avg(value) as avg_value,
        quantile_by((select percentile_method from settings), value, [0.5, 0.9, 0.95, 0.99]) as quantiles,
        min(value) as min_value,
        max(value) as max_value,
        sum(value) as total,
        avg((value <> 0)::integer) as nonzero_share
    from scoped
    where requirement_id in (select requirement_id from by_counts where not is_by_counts)
    group by requirement_id, iteration
),

grouped as (
    select * from grouped_by_counts
    union all by name
    select * from grouped_by_sorting
),

final as (
    select
        grouped.requirement_id,
        grouped.iteration,
        grouped.samples,
        grouped.samples / iterations.duration_s as samples_per_s,
        grouped.errors / grouped.samples as error_rate,
        case when grouped.slow_call_ms is not null then coalesce(grouped.slow_calls, 0) end as slow_calls,
        grouped.slow_call_ms,
        grouped.avg_value,
        grouped.quantiles[1] as p50_value,
        grouped.quantiles[2] as p90_value,
        grouped.quantiles[3] as p95_value,
        grouped.quantiles[4] as p99_value,
        grouped.min_value,
        grouped.max_value,
        grouped.total,
        grouped.total / iterations.duration_s as total_per_s,
        grouped.nonzero_share,
        coalesce(dropped.dropped, 0) as dropped,
        (grouped.errors + coalesce(dropped.dropped, 0)) / (grouped.samples + coalesce(dropped.dropped, 0))
            as error_rate_with_dropped
    from grouped
    join iterations on iterations.run_id = $run_id and iterations.iteration = grouped.iteration
    left join dropped on dropped.requirement_id = grouped.requirement_id and dropped.iteration = grouped.iteration
)

select * from final
