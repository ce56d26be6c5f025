-- Report query: response time and throughput per iteration, side and label, for the charts against load
-- when a run has several labels; only the $max_labels busiest labels of each side. p95 by the run's percentile_method.
-- grain: one row per (iteration, side, label)
-- upstream: requests, iterations, runs, percentile_method, quantile_by
with settings as (
    select percentile_method(manifest) as percentile_method from runs where run_id = $run_id
),

per_label as (
    select
        requests.iteration,
        requests.side,
        coalesce(requests.label, '(none)') as label,
        count(*) as calls,
        count(*) / any_value(iterations.duration_s) as calls_per_s,
        avg(requests.elapsed_ms) as avg_ms,
        quantile_by((select percentile_method from settings), requests.elapsed_ms, 0.95) as p95_ms
    from requests
    join iterations using (run_id, iteration)
    where requests.run_id = $run_id and not requests.is_warmup
    group by all
),

busiest as (
    select side, label
    from per_label
    group by side, label
    qualify row_number() over (partition by side order by sum(calls) desc, label) <= $max_labels
)

select per_label.* from per_label join busiest using (side, label) order by side, label, iteration
