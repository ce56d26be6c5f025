-- Report query: a soak in one row per side, the summary a soak report opens with: its requests over every
-- window after the warm-up (calls, errors, error rate, calls per second, average, p95 and max in ms) and
-- the load it held (the load's threads: `vus`, `threads` or `max_vus`; its `message_size`; the whole load as
-- text). No row for a run that is no soak. p95 by the run's percentile_method.
-- grain: one row per side (client, server)
-- upstream: runs, iterations, requests, load_text, percentile_method, quantile_by
with settings as (
    select percentile_method(manifest) as percentile_method from runs where run_id = $run_id
),

soak_windows as (
    select iteration, duration_s, load
    from iterations
    where run_id = $run_id
        and exists (select 1 from runs where run_id = $run_id and (manifest -> 'soak' ->> 'window_s') is not null)
),

held as (
    select
        count(*) as windows,
        sum(duration_s) as seconds,
        any_value(load) as load
    from soak_windows
),

calls as (
    select requests.side, requests.elapsed_ms, requests.is_error
    from requests
    join soak_windows using (iteration)
    where requests.run_id = $run_id and requests.side in ('client', 'server') and not requests.is_warmup
),

final as (
    select
        calls.side,
        any_value(held.windows) as windows,
        count(*) as calls,
        count(*) filter (where calls.is_error) as errors,
        count(*) filter (where calls.is_error) / count(*) as error_rate,
        count(*) / any_value(held.seconds) as calls_per_s,
        avg(calls.elapsed_ms) as avg_ms,
        quantile_by((select percentile_method from settings), calls.elapsed_ms, 0.95) as p95_ms,
        max(calls.elapsed_ms) as max_ms,
        coalesce(
            try_cast(any_value(held.load) ->> 'vus' as double), try_cast(any_value(held.load) ->> 'threads' as double),
            try_cast(any_value(held.load) ->> 'max_vus' as double)
        ) as threads,
        try_cast(any_value(held.load) ->> 'message_size' as double) as message_size,
        load_text(any_value(held.load)) as load
    from calls
    cross join held
    group by calls.side
)

select * from final order by side
