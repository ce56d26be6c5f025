-- Request statistics of one run at the grains the public marts show, and per label for the history's series
-- (series_values), computed in one pass; warm-up requests are left out.
-- Percentiles are exact, by the run's percentile_method (macro percentile_method): `linear` interpolates between
-- closest ranks (quantile_cont, numpy's default), `nearest_rank` takes the value at rank ceil(q n) (quantile_disc,
-- numpy's inverted_cdf). A side whose durations repeat (int_request_paths: millisecond logs) has them read from the
-- count of every distinct duration (int_request_counts, macro quantile_from_counts_by), which holds only the distinct
-- durations and reads no row again; a side with nearly unique durations (k6's microseconds) is sorted (macro
-- quantile_by), which is faster there (10 M k6 durations: 15 s against 200 s by counts).
-- `slow_calls`: the calls at or over `slow_call_ms`, the manifest's thresholds.slow_call_ms (default 1000).
-- materialized: table
-- grain: run_id, grain, iteration, side, host, status_code, label -- one row per grouping set, named by `grain`
-- upstream: requests, int_request_paths, int_request_counts, iterations, runs, quantile_from_counts_by, quantile_by,
--   percentile_method, request_stats_grain
with requests as (  -- the sides whose durations are sorted: read once, by grouped_by_sorting
    select side, host, iteration, status_code, coalesce(label, '(none)') as label, elapsed_ms, is_error
    from requests
    where run_id = $run_id and iteration is not null and not is_warmup
        and side in (select side from int_request_paths where not is_by_counts)
),

settings as (
    select
        coalesce((manifest -> 'thresholds' ->> 'slow_call_ms')::double, 1000) as slow_call_ms,
        percentile_method(manifest) as percentile_method
    from runs
    where run_id = $run_id
),

by_duration as (
    select
        iteration, side, host, status_code, coalesce(label, '(none)') as label, elapsed_ms,
        sum(calls) as calls, sum(errors) as errors
    from int_request_counts
    where grain = 'iteration' and iteration is not null and not is_warmup
    group by all
),

rolled_up as (
    select
        iteration,
        side,
        host,
        status_code,
        label,
        request_stats_grain(grouping(host, status_code, label)) as grain,
        elapsed_ms,
        sum(calls)::bigint as calls,
        sum(errors)::bigint as errors
    from by_duration
    group by grouping sets (
        (iteration, side, host, status_code, elapsed_ms), (iteration, side, host, elapsed_ms), (iteration, side, elapsed_ms),
        (iteration, side, label, elapsed_ms)
    )
),

ranked as (
    select
        *,
        -- NULL durations sort last, so they never count towards the ranks of the others
        sum(calls) over (partition by grain, iteration, side, host, status_code, label order by elapsed_ms
                         rows between unbounded preceding and current row) as running_calls,
        sum(calls) filter (where elapsed_ms is not null) over (partition by grain, iteration, side, host, status_code, label)
            - 1 as last_rank
    from rolled_up
),

grouped_by_counts as (
    select
        iteration,
        side,
        host,
        status_code,
        label,
        grain,
        sum(calls)::bigint as calls,
        sum(errors)::bigint as errors,
        coalesce(sum(calls) filter (where elapsed_ms >= (select slow_call_ms from settings)), 0)::bigint as slow_calls,
        sum(elapsed_ms * calls) filter (where elapsed_ms is not null)
            / sum(calls) filter (where elapsed_ms is not null) as avg_ms,
        quantile_from_counts_by((select percentile_method from settings), elapsed_ms, running_calls, last_rank,
            0.5) as p50_ms,
        quantile_from_counts_by((select percentile_method from settings), elapsed_ms, running_calls, last_rank,
            0.9) as p90_ms,
        quantile_from_counts_by((select percentile_method from settings), elapsed_ms, running_calls, last_rank,
            0.95) as p95_ms,
        quantile_from_counts_by((select percentile_method from settings), elapsed_ms, running_calls, last_rank,
            0.99) as p99_ms,
        min(elapsed_ms) as min_ms,
        max(elapsed_ms) as max_ms
    from ranked
    group by grain, iteration, side, host, status_code, label
),

grouped_by_sorting as (
    select
        iteration,
        side,
        host,
        status_code,
        label,
        request_stats_grain(grouping(host, status_code, label)) as grain,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        count(*) filter (where elapsed_ms >= (select slow_call_ms from settings)) as slow_calls,
        avg(elapsed_ms) as avg_ms,
        quantile_by((select percentile_method from settings), elapsed_ms, [0.5, 0.9, 0.95, 0.99]) as quantiles_ms,
        min(elapsed_ms) as min_ms,
        max(elapsed_ms) as max_ms
    from requests
    group by grouping sets ((iteration, side, host, status_code), (iteration, side, host), (iteration, side),
        (iteration, side, label))
),

grouped as (
    select * from grouped_by_counts
    union all by name
    select
        * exclude (quantiles_ms),
        quantiles_ms[1] as p50_ms,
        quantiles_ms[2] as p90_ms,
        quantiles_ms[3] as p95_ms,
        quantiles_ms[4] as p99_ms
    from grouped_by_sorting
),

final as (
    select
        $run_id as run_id,
        grouped.iteration,
        grouped.side,
        grouped.host,
        grouped.status_code,
        grouped.label,
        grouped.grain,
        grouped.calls,
        grouped.errors,
        grouped.errors / grouped.calls as error_rate,
        grouped.calls / iterations.duration_s as calls_per_s,
        grouped.slow_calls,
        (select slow_call_ms from settings) as slow_call_ms,
        grouped.avg_ms,
        grouped.p50_ms,
        grouped.p90_ms,
        grouped.p95_ms,
        grouped.p99_ms,
        grouped.min_ms,
        grouped.max_ms
    from grouped
    join iterations on iterations.run_id = $run_id and iterations.iteration = grouped.iteration
)

select * from final
