-- Public mart: how throughput follows the load, per side and series: the knee and the highest throughput measured.
-- The load level of an iteration is `load_level(load, capacity.load_key)` and whether a step scales is
-- `step_scales(...)`: the functions of tasks/bundle/load.py the ramp's stop rule calls, registered in
-- DuckDB, so the two always agree (docs/report.md "capacity"). Each iteration is set against the previous
-- one of the same side and series (the load keys that are not the level, e.g. a message size): it does not
-- scale when it made less than `capacity.min_achieved_ratio` (0.9) of the calls offered (open model:
-- calls / (calls + dropped), achieved_share),
-- or when its load rose but its throughput gain was under `capacity.min_scaling` (0.5) x its load gain.
-- `knee_iteration` is the iteration before the first one that does not scale (the last load the service
-- still absorbed in proportion); `saturated` is null when no step could be judged. A background load is
-- not measured against a load it was given: its side never forms a knee and has no row.
-- One row per side and series: a matrix campaign (load.matrix, a step key such as message_size or adapters)
-- gets a knee and a maximum per series; a campaign whose steps vary only the level has one row per side
-- with `series` '' (docs/warehouse.md "capacity"). A soak (manifest `soak`) has no rows.
-- Each point carries its step's failure ratio (`error_rate`) and, when the manifest names the load key that
-- counts the instances (capacity.instance_key, e.g. adapters), its `calls_per_s_per_instance` (iteration_summary).
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, side, series
-- upstream: runs, iterations, iteration_summary, load_text, series_order
with options as (
    select
        manifest -> 'capacity' ->> 'load_key' as load_key,
        coalesce(try_cast(manifest -> 'capacity' ->> 'min_scaling' as double), 0.5) as min_scaling,
        coalesce(try_cast(manifest -> 'capacity' ->> 'min_achieved_ratio' as double), 0.9) as min_achieved_ratio
    from runs
    -- a soak's windows are one load over time, not load steps: soak_drift describes it, capacity does not
    where run_id = $run_id and (manifest -> 'soak' ->> 'window_s') is null
),

levels as (
    select
        iterations.iteration,
        load_level(iterations.load::varchar, options.load_key) as load_level,
        load_series(iterations.load::varchar, options.load_key) as series,
        load_text(iterations.load) as load_text,
        iterations.load
    from iterations
    cross join options
    where iterations.run_id = $run_id
),

summary as (
    select side, iteration, calls, dropped, calls_per_s, offered_per_s, error_rate, calls_per_s_per_instance
    from iteration_summary
    where run_id = $run_id and side <> 'background'
),

points as (
    select
        summary.side, summary.iteration, levels.series, levels.load_level, levels.load_text, summary.calls_per_s,
        summary.offered_per_s, achieved_share(levels.load::varchar, summary.calls, summary.dropped) as achieved_share,
        summary.error_rate, summary.calls_per_s_per_instance
    from summary
    join levels using (iteration)
),

steps as (
    select
        side,
        series,
        iteration,
        load_level,
        load_text,
        calls_per_s,
        offered_per_s,
        achieved_share,
        lag(iteration) over by_series as previous_iteration,
        lag(load_level) over by_series as previous_load_level,
        lag(load_text) over by_series as previous_load_text,
        lag(calls_per_s) over by_series as previous_calls_per_s
    from points
    where load_level > 0 and calls_per_s > 0
    window by_series as (partition by side, series order by iteration)
),

judged as (
    select
        steps.*,
        100 * (steps.load_level / steps.previous_load_level - 1) as load_gain_pct,
        100 * (steps.calls_per_s / steps.previous_calls_per_s - 1) as throughput_gain_pct,
        step_scales(
            steps.previous_load_level, steps.load_level, steps.previous_calls_per_s, steps.calls_per_s,
            steps.achieved_share, options.min_scaling, options.min_achieved_ratio
        ) as scales,
        steps.achieved_share < options.min_achieved_ratio as is_short_of_offered
    from steps
    cross join options
),

first_flat as (
    select distinct on (side, series) *
    from judged
    where not scales
    order by side, series, iteration
),

last_scaling as (
    select distinct on (side, series) *
    from judged
    where scales
    order by side, series, iteration desc
),

highest as (
    select distinct on (side, series) side, series, iteration, calls_per_s
    from points
    where calls_per_s is not null
    order by side, series, calls_per_s desc, iteration
),

per_side as (
    select
        points.side,
        points.series,
        list(
            {
                'iteration': points.iteration,
                'series': points.series,
                'load_level': points.load_level,
                'calls_per_s': points.calls_per_s,
                'load_gain_pct': judged.load_gain_pct,
                'throughput_gain_pct': judged.throughput_gain_pct,
                'offered_per_s': points.offered_per_s,
                'achieved_share': points.achieved_share,
                'scales': judged.scales,
                'error_rate': points.error_rate,
                'calls_per_s_per_instance': points.calls_per_s_per_instance
            }
            order by points.iteration
        ) as points,
        count(points.load_level) as with_level,
        count(judged.scales) as judged_steps
    from points
    left join judged using (side, iteration)
    group by points.side, points.series
),

final as (
    select
        $run_id as run_id,
        per_side.side,
        per_side.series,
        first_flat.previous_iteration as knee_iteration,
        first_flat.previous_load_level as knee_load_level,
        first_flat.previous_load_text as knee_load,
        first_flat.previous_calls_per_s as knee_calls_per_s,
        highest.calls_per_s as max_calls_per_s,
        highest.iteration as max_iteration,
        case when per_side.judged_steps > 0 then first_flat.iteration is not null end as saturated,
        case
            when first_flat.is_short_of_offered then format(
                'iteration {} ({}) made {:.1f} % of the calls offered ({:.1f} of {:.1f} calls/s), less than {:g}: '
                || coalesce(format('the knee is iteration {}', first_flat.previous_iteration),
                            'saturated from the first judged iteration'),
                first_flat.iteration, first_flat.load_text, 100 * first_flat.achieved_share, first_flat.calls_per_s,
                first_flat.offered_per_s, options.min_achieved_ratio
            )
            when first_flat.iteration is not null then format(
                'iteration {} raised the load {:.0f} % ({} to {}) but throughput {:+.1f} % ({:.1f} to {:.1f} '
                || 'calls/s), less than {:g} x the load gain: the knee is iteration {}',
                first_flat.iteration, first_flat.load_gain_pct, first_flat.previous_load_text,
                first_flat.load_text, first_flat.throughput_gain_pct, first_flat.previous_calls_per_s,
                first_flat.calls_per_s, options.min_scaling, first_flat.previous_iteration
            )
            when last_scaling.iteration is not null then format(
                'throughput rose at least {:g} x as fast as the load at every step up to iteration {} '
                || '({}, {:.1f} calls/s): no knee within the tested load',
                options.min_scaling, last_scaling.iteration, last_scaling.load_text, last_scaling.calls_per_s
            )
            when per_side.with_level = 0 then
                'the iterations carry no load level (vus, nodes x threads, users, or the manifest''s capacity.load_key)'
            else 'no iteration raised the load over an earlier one with throughput: no knee can be judged'
        end as reason,
        options.min_scaling,
        options.min_achieved_ratio,
        per_side.points
    from per_side
    cross join options
    left join first_flat using (side, series)
    left join last_scaling using (side, series)
    left join highest using (side, series)
)

select * from final order by side, series_order(series), series
