-- Report query behind `perfcampaign compare` and the report's baseline section: run A against run B, per
-- iteration (matched by index), side and label, one row per metric. The `(all)` label is the side's
-- iteration_summary row (the numbers of the iteration table); per-label figures are computed from
-- `requests` with the same definitions (each run's percentiles by its own percentile_method). Only the $max_labels
-- busiest labels of each side are kept.
-- grain: one row per (iteration, side, label, metric)
-- upstream: iteration_summary, iterations, requests, runs, load_text, percentile_method, quantile_by (sql/macros)
with iterations as (
    select iterations.run_id, iterations.iteration, iterations.duration_s, iterations.load,
        percentile_method(runs.manifest) as percentile_method
    from iterations
    join runs using (run_id)
    where iterations.run_id in ($run_a, $run_b)
),

whole_side as (
    select
        run_id, iteration, side, '(all)' as label, calls, errors, calls_per_s, error_rate, avg_ms, p50_ms, p90_ms,
        p95_ms, p99_ms, max_ms
    from iteration_summary
    where run_id in ($run_a, $run_b)
),

per_label as (
    select
        requests.run_id,
        requests.iteration,
        requests.side,
        coalesce(requests.label, '(none)') as label,
        count(*) as calls,
        count(*) filter (where requests.is_error) as errors,
        count(*) / any_value(iterations.duration_s) as calls_per_s,
        count(*) filter (where requests.is_error) / count(*) as error_rate,
        avg(requests.elapsed_ms) as avg_ms,
        quantile_by(iterations.percentile_method, requests.elapsed_ms, 0.50) as p50_ms,
        quantile_by(iterations.percentile_method, requests.elapsed_ms, 0.90) as p90_ms,
        quantile_by(iterations.percentile_method, requests.elapsed_ms, 0.95) as p95_ms,
        quantile_by(iterations.percentile_method, requests.elapsed_ms, 0.99) as p99_ms,
        max(requests.elapsed_ms) as max_ms
    from requests
    join iterations using (run_id, iteration)
    where requests.run_id in ($run_a, $run_b) and not requests.is_warmup
    group by all
),

label_calls as (
    select side, label, sum(calls) as calls from per_label group by side, label
),

busiest_labels as (
    -- a side with one label only has nothing to add to its (all) rows
    select side, label
    from label_calls
    qualify count(*) over (partition by side) > 1
        and row_number() over (partition by side order by calls desc, label) <= $max_labels
),

stats as (
    select * from whole_side
    union all by name
    select per_label.* from per_label join busiest_labels using (side, label)
),

long as (
    unpivot stats
    on calls_per_s, error_rate, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms
    into name metric value value
),

paired as (
    select
        coalesce(a.iteration, b.iteration) as iteration,
        coalesce(a.side, b.side) as side,
        coalesce(a.label, b.label) as label,
        coalesce(a.metric, b.metric) as metric,
        a.value as a,
        b.value as b,
        a.calls as calls_a,
        b.calls as calls_b,
        a.errors as errors_a,
        b.errors as errors_b
    from (select * from long where run_id = $run_a) as a
    full join (select * from long where run_id = $run_b) as b using (iteration, side, label, metric)
),

final as (
    select
        paired.iteration,
        load_text(ia.load) as load_a,
        load_text(ib.load) as load_b,
        paired.side,
        paired.label,
        paired.metric,
        paired.a,
        paired.b,
        case when paired.a <> 0 then 100 * (paired.b / paired.a - 1) end as change_pct,
        paired.calls_a,
        paired.calls_b,
        paired.errors_a,
        paired.errors_b,
        ia.duration_s as duration_a_s,
        ib.duration_s as duration_b_s
    from paired
    left join iterations as ia on ia.run_id = $run_a and ia.iteration = paired.iteration
    left join iterations as ib on ib.run_id = $run_b and ib.iteration = paired.iteration
)

select * from final
order by
    iteration, side, label = '(all)' desc, label,
    list_position(['calls_per_s', 'error_rate', 'avg_ms', 'p50_ms', 'p90_ms', 'p95_ms', 'p99_ms', 'max_ms'], metric)
