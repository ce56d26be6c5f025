-- Public mart: requests per minute for time-series charts, with the iteration most of the minute's calls
-- belong to (null when most fall outside every iteration). p95 as int_request_stats computes its percentiles, by
-- the run's percentile_method: from the counts of distinct durations on a side whose durations repeat
-- (int_request_counts' `minute` grain: a 12 h soak's 100 M requests are counted once, with the other grains, not
-- held and sorted per minute), by sorting on a side with nearly unique ones.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, side, host, minute_at
-- upstream: requests, int_request_paths, int_request_counts, runs, quantile_from_counts_by, quantile_by,
--   percentile_method
with settings as (
    select percentile_method(manifest) as percentile_method from runs where run_id = $run_id
),

requests as (  -- the sides whose durations are sorted: read once, by `sorted`
    -- the minute by integer arithmetic: date_trunc on a timestamptz goes through ICU (3 s per 10 M rows)
    select side, host, epoch_us(started_at) // 60000000 * 60000000 as minute_us, iteration, elapsed_ms, is_error
    from requests
    where run_id = $run_id and side in (select side from int_request_paths where not is_by_counts)
),

-- outside every iteration counts as one more candidate (-1)
by_duration as (
    select side, host, minute_us, coalesce(iteration, -1) as iteration, elapsed_ms, calls, errors
    from int_request_counts
    where grain = 'minute'
),

main_iteration as (
    select side, host, minute_us, nullif(arg_max(iteration, calls), -1) as iteration
    from (select side, host, minute_us, iteration, sum(calls) as calls from by_duration group by all)
    group by all
),

ranked as (
    select
        side,
        host,
        minute_us,
        elapsed_ms,
        calls,
        errors,
        sum(calls) over (partition by side, host, minute_us order by elapsed_ms
                         rows between unbounded preceding and current row) as running_calls,
        sum(calls) filter (where elapsed_ms is not null) over (partition by side, host, minute_us) - 1 as last_rank
    from (select side, host, minute_us, elapsed_ms, sum(calls) as calls, sum(errors) as errors
          from by_duration group by all)
),

counted as (
    select
        ranked.side,
        ranked.host,
        make_timestamptz(ranked.minute_us) as minute_at,
        any_value(main_iteration.iteration) as iteration,
        sum(ranked.calls)::bigint as calls,
        sum(ranked.errors)::bigint as errors,
        sum(ranked.elapsed_ms * ranked.calls) filter (where ranked.elapsed_ms is not null)
            / sum(ranked.calls) filter (where ranked.elapsed_ms is not null) as avg_ms,
        quantile_from_counts_by(
            (select percentile_method from settings), ranked.elapsed_ms, ranked.running_calls, ranked.last_rank, 0.95
        ) as p95_ms,
        max(ranked.elapsed_ms) as max_ms
    from ranked
    join main_iteration using (side, host, minute_us)
    group by ranked.side, ranked.host, ranked.minute_us
),

sorted as (
    select
        side,
        host,
        make_timestamptz(minute_us) as minute_at,
        nullif(mode(coalesce(iteration, -1)), -1) as iteration,
        count(*) as calls,
        count(*) filter (where is_error) as errors,
        avg(elapsed_ms) as avg_ms,
        quantile_by((select percentile_method from settings), elapsed_ms, 0.95) as p95_ms,
        max(elapsed_ms) as max_ms
    from requests
    group by side, host, minute_us
),

final as (
    select $run_id as run_id, * from counted
    union all by name
    select $run_id as run_id, * from sorted
)

select * from final order by side, host, minute_at
