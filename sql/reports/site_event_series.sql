-- Report query: the series each event moved, for the site's event pages (tasks/site): each change point with its
-- before and after levels (segment medians, as the analysis found them), its change and its triage, and a 95 %
-- interval of the median of each segment: distribution-free, from order statistics. A segment is the series'
-- points (view `series`, oldest first) between its neighbouring change points of kind `change`, outliers left
-- out; an outlier's `before` is the segment around it, its `after` one value (no interval). For a segment of n
-- values sorted x(1) <= ... <= x(n), the interval is [x(k), x(n+1-k)] with k the largest rank for which
-- P(Binomial(n, 1/2) <= k - 1) <= 0.025, so it holds the true median with probability >= 95 % whatever the
-- distribution; under 6 values no k exists and the interval is null.
-- grain: one row per change_id
-- upstream: change_points, series
with points as (
    select campaign, scenario, plan_id, side, host, iteration, label, metric, run_id, value,
        row_number() over (partition by campaign, scenario, plan_id, side, host, iteration, label, metric
                           order by run_started_at, run_id) as position
    from series
),

placed as (
    select change_points.*, points.position
    from change_points
    join points using (campaign, scenario, plan_id, side, host, iteration, label, metric, run_id)
),

bounds as (
    -- each change point's segments: [start, split) before, [split, stop) after; an outlier's is the segment
    -- around it (between the changes before and after it)
    select change_id, campaign, scenario, plan_id, side, host, iteration, label, metric, kind,
        coalesce(max(case when kind = 'change' then position end) over (
            partition by campaign, scenario, plan_id, side, host, iteration, label, metric order by position
            rows between unbounded preceding and 1 preceding), 1) as start,
        position as split,
        coalesce(min(case when kind = 'change' then position end) over (
            partition by campaign, scenario, plan_id, side, host, iteration, label, metric order by position
            rows between 1 following and unbounded following), 1e18) as stop
    from placed
),

clean as (
    -- the series' points but its outliers
    select points.*
    from points
    anti join placed as outliers
        on outliers.kind = 'outlier' and outliers.campaign = points.campaign and outliers.scenario = points.scenario
        and outliers.plan_id = points.plan_id and outliers.side = points.side and outliers.host = points.host
        and outliers.iteration = points.iteration and outliers.label = points.label
        and outliers.metric = points.metric and outliers.position = points.position
),

segments as (
    select bounds.change_id,
        case when bounds.kind = 'change' and clean.position >= bounds.split then 'after' else 'before' end as segment,
        list_sort(list(clean.value)) as sorted
    from bounds
    join clean
        on clean.campaign = bounds.campaign and clean.scenario = bounds.scenario and clean.plan_id = bounds.plan_id
        and clean.side = bounds.side and clean.host = bounds.host and clean.iteration = bounds.iteration
        and clean.label = bounds.label and clean.metric = bounds.metric
        and clean.position >= bounds.start and clean.position < bounds.stop
    group by all
),

sizes as (
    select distinct len(sorted) as n from segments
),

binomial as (
    -- P(Binomial(n, 1/2) <= i) for i < n / 2, from the log of each term (exact enough for any n: no overflow)
    select n, i, sum(exp(lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) - n * ln(2)))
        over (partition by n order by i) as cdf
    from sizes, range(0, (n + 1) // 2) as r(i)
),

ranks as (
    select sizes.n, count(binomial.i) as k  -- cdf grows with i: k - 1 is the last i with cdf <= 0.025
    from sizes
    left join binomial on binomial.n = sizes.n and binomial.cdf <= 0.025
    group by sizes.n
),

intervals as (
    select segments.change_id, segments.segment, len(segments.sorted) as n,
        case when ranks.k > 0 then segments.sorted[ranks.k] end as low,
        case when ranks.k > 0 then segments.sorted[len(segments.sorted) + 1 - ranks.k] end as high
    from segments
    join ranks on ranks.n = len(segments.sorted)
),

final as (
    select
        change_points.campaign, change_points.event_id, change_points.change_id, change_points.side,
        change_points.host, change_points.iteration, change_points.label, change_points.metric, change_points.run_id,
        change_points.previous_run_id, change_points.before_value, change_points.after_value,
        before.n as before_runs, before.low as before_low, before.high as before_high,
        after.n as after_runs, after.low as after_low, after.high as after_high,
        change_points.change_pct, change_points.direction, change_points.kind, change_points.p_value,
        change_points.status, change_points.triage_note, change_points.triaged_at
    from change_points
    left join intervals as before on before.change_id = change_points.change_id and before.segment = 'before'
    left join intervals as after on after.change_id = change_points.change_id and after.segment = 'after'
)

select * from final
order by campaign, event_id, metric, side, host, iteration, label
