-- Request statistics of one run at the grains the public marts show, and per label for the history's series
-- (series_values), computed in one pass.
-- Percentiles are exact and interpolate linearly between closest ranks (quantile_cont, as numpy's default).
-- materialized: table
-- grain: run_id, grain, iteration, side, host, status_code, label -- one row per grouping set, named by `grain`
-- upstream: requests, iterations, runs
with requests as (
    select side, host, iteration, status_code, coalesce(label, '(none)') as label, elapsed_ms, is_error
    from requests
    where run_id = $run_id and iteration is not null and not is_warmup
),

settings as (
    select coalesce((manifest -> 'thresholds' ->> 'slow_call_ms')::double, 1000) as slow_call_ms
    from runs
    where run_id = $run_id
),

grouped as (
    select
        iteration,
        side,
        host,
        status_code,
        label,
        case grouping(host, status_code, label)
            when 1 then 'status'
            when 3 then 'host'
            when 6 then 'label'
            else 'side'
        end as grain,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        count(*) filter (where elapsed_ms > (select slow_call_ms from settings)) as slow_calls,
        avg(elapsed_ms) as avg_ms,
        quantile_cont(elapsed_ms, [0.5, 0.9, 0.95, 0.99]) as quantiles_ms,
        min(elapsed_ms) as min_ms,
        max(elapsed_ms) as max_ms
    from requests
    group by grouping sets ((iteration, side, host, status_code), (iteration, side, host), (iteration, side),
        (iteration, side, label))
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
        grouped.avg_ms,
        grouped.quantiles_ms[1] as p50_ms,
        grouped.quantiles_ms[2] as p90_ms,
        grouped.quantiles_ms[3] as p95_ms,
        grouped.quantiles_ms[4] as p99_ms,
        grouped.min_ms,
        grouped.max_ms
    from grouped
    join iterations on iterations.run_id = $run_id and iterations.iteration = grouped.iteration
)

select * from final
