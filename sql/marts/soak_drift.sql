-- Public mart: does a soak drift? One line per metric and scope: the trend of its per-window values over the
-- soak (its iterations are equal time windows, manifest soak.window_s), fitted by ordinary least squares of
-- each window's value on the time of the window's middle (after its warm-up). Fitting windows, not raw calls:
-- p95, throughput and error rate exist only per window, and single calls are neither independent nor normal
-- (bursts, a slow call drags its neighbours), which would make a per-call interval far too narrow.
-- The old generation after GC uses each window's lowest value after a GC that left it no bigger
-- (jvm_iteration_stats.old_used_after_gc_min_kb); windows without one are left out.
-- The slope per hour comes with a 95 % confidence interval (slope +- t(0.975, n - 2) x its standard error,
-- macro t_quantile_975) and R^2. Slopes in *_pct_per_h are relative: % of the soak's mean per hour for
-- latency and throughput, percentage points per hour for the error rate, % of the old generation's capacity
-- per hour. Verdict against the tolerance T (thresholds, tasks/bundle/thresholds.py): "stable" when the whole
-- interval is inside [-T, T], "drifting" when it is entirely outside, else "inconclusive"; with fewer than
-- drift_min_windows windows with a value: "too short to judge". Runs without soak.window_s have no rows.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, side, host, subject, metric
-- upstream: runs, iterations, iteration_stats, iteration_summary, jvm_iteration_stats, t_quantile_975
with soak as (
    select manifest -> 'thresholds' as given
    from runs
    where run_id = $run_id and (manifest -> 'soak' ->> 'window_s') is not null
),

tolerances as (
    select 'avg_ms' as metric, coalesce((given ->> 'avg_ms_drift_max_pct_per_h')::double, 2) as max_pct_per_h from soak
    union all
    select 'p95_ms', coalesce((given ->> 'p95_ms_drift_max_pct_per_h')::double, 2) from soak
    union all
    select 'calls_per_s', coalesce((given ->> 'calls_per_s_drift_max_pct_per_h')::double, 2) from soak
    union all
    select 'error_rate', coalesce((given ->> 'error_rate_drift_max_pp_per_h')::double, 0.1) from soak
    union all
    select 'old_gen_after_gc_kb', coalesce((given ->> 'old_gen_growth_max_pct_per_h')::double, 5) from soak
),

settings as (
    select coalesce((given ->> 'drift_min_windows')::double, 5) as min_windows from soak
),

soak_windows as (
    select
        iteration,
        epoch(started_at) + warmup_s + duration_s / 2 as middle_s,
        epoch(started_at) as started_s,
        epoch(ended_at) as ended_s
    from iterations
    where run_id = $run_id and exists (select 1 from soak)
),

-- A window in which a host (or a whole side) logged no call has no statistics row: its throughput is 0
-- calls/s (a service that stops answering is the worst drift), its latencies and error rate have no value.
hosts as (
    select distinct side, host
    from iteration_stats
    where run_id = $run_id and side in ('client', 'server')
),

by_host as (
    select
        hosts.side,
        hosts.host,
        windows.iteration,
        stats.avg_ms,
        stats.p95_ms,
        coalesce(stats.calls_per_s, 0) as calls_per_s,
        stats.error_rate
    from hosts
    cross join soak_windows as windows
    left join iteration_stats as stats
        on stats.run_id = $run_id and stats.side = hosts.side and stats.host = hosts.host
        and stats.iteration = windows.iteration
),

by_side as (
    select
        sides.side,
        '*' as host,
        windows.iteration,
        stats.avg_ms,
        stats.p95_ms,
        coalesce(stats.calls_per_s, 0) as calls_per_s,
        stats.error_rate
    from (select distinct side from hosts) as sides
    cross join soak_windows as windows
    left join iteration_summary as stats
        on stats.run_id = $run_id and stats.side = sides.side and stats.iteration = windows.iteration
),

request_values as (
    unpivot (select * from by_host union all by name select * from by_side)
    on avg_ms, p95_ms, calls_per_s, error_rate
    into name metric value value
),

jvm_values as (
    select
        'old_gen_after_gc_kb' as metric,
        'jvm' as side,
        host,
        source_path as subject,
        iteration,
        old_used_after_gc_min_kb::double as value,
        max(old_capacity_kb) over (partition by host, source_path) as capacity_kb
    from jvm_iteration_stats
    where run_id = $run_id
),

points as (
    select metric, side, host, 'requests' as subject, iteration, value, null::double as capacity_kb
    from request_values
    union all by name
    select * from jvm_values
),

fits as (
    select
        points.metric,
        points.side,
        points.host,
        points.subject,
        count(points.value) as windows,
        max(windows.ended_s) filter (where points.value is not null)
            - min(windows.started_s) filter (where points.value is not null) as span_s,
        avg(points.value) as level,
        -- regr_slope is NaN for a single window; this is NULL there
        regr_sxy(points.value, windows.middle_s / 3600) / nullif(regr_sxx(points.value, windows.middle_s / 3600), 0)
            as slope_per_h,
        regr_r2(points.value, windows.middle_s / 3600) as r2,
        sqrt(greatest(regr_syy(points.value, windows.middle_s / 3600)
            - regr_sxy(points.value, windows.middle_s / 3600) ^ 2 / nullif(regr_sxx(points.value, windows.middle_s / 3600), 0), 0)
            / nullif(count(points.value) - 2, 0) / nullif(regr_sxx(points.value, windows.middle_s / 3600), 0)) as slope_se_per_h,
        max(points.capacity_kb) as capacity_kb
    from points
    join soak_windows as windows using (iteration)
    group by all
),

relative as (
    select
        fits.*,
        case
            when fits.metric = 'error_rate' then 100
            when fits.metric = 'old_gen_after_gc_kb' then 100 / nullif(fits.capacity_kb, 0)
            else 100 / nullif(fits.level, 0)
        end as scale,
        t_quantile_975(fits.windows - 2) as t_factor,
        tolerances.max_pct_per_h,
        settings.min_windows,
        case when fits.metric = 'error_rate' then 'pp' else '%' end as unit
    from fits
    join tolerances using (metric)
    cross join settings
),

judged as (
    select
        *,
        slope_per_h * scale as slope_pct_per_h,
        (slope_per_h - t_factor * slope_se_per_h) * scale as ci_low_pct_per_h,
        (slope_per_h + t_factor * slope_se_per_h) * scale as ci_high_pct_per_h
    from relative
),

final as (
    select
        $run_id as run_id,
        metric,
        side,
        host,
        subject,
        windows,
        span_s,
        level,
        slope_per_h,
        slope_pct_per_h,
        ci_low_pct_per_h,
        ci_high_pct_per_h,
        r2,
        max_pct_per_h,
        case
            when windows < greatest(min_windows, 3) or ci_low_pct_per_h is null then 'too short to judge'
            when ci_low_pct_per_h >= -max_pct_per_h and ci_high_pct_per_h <= max_pct_per_h then 'stable'
            when ci_low_pct_per_h > max_pct_per_h or ci_high_pct_per_h < -max_pct_per_h then 'drifting'
            else 'inconclusive'
        end as verdict,
        case
            when windows < greatest(min_windows, 3) or ci_low_pct_per_h is null then format(
                '{} of {} {}: {} window(s) with a value, at least {:g} are needed to judge a trend',
                metric, side, host, windows, greatest(min_windows, 3))
            else format(
                '{} of {} {}: {:+.4g} {}/h (95 % CI {:+.4g} to {:+.4g}, R^2 {:.2f}, {} windows over {:.0f} s), '
                || 'tolerance +-{:g} {}/h',
                metric, side, host, slope_pct_per_h, unit, ci_low_pct_per_h, ci_high_pct_per_h, coalesce(r2, 0),
                windows, span_s, max_pct_per_h, unit)
        end as finding
    from judged
)

select * from final order by side, host, subject, metric
