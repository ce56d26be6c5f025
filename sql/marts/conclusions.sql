-- Public mart: what a run shows, in sentences a performance engineer would write, each with its number.
-- Topics: `requirements` (one overview row), `requirement` (one per requirement: holds or not, at which
-- iterations, the worst value and its load, the margin, and up to which load it holds), `capacity` (one
-- per side and series: the knee and the highest throughput; then one caution per side naming the iterations
-- whose load generator ran out of CPU), `client_server` (the iteration with the largest gap
-- between the load tool's and the service's response time), `health` (an overview row, then one row per
-- finding that is not ok). The report prints these sentences as they are: numbers are formatted here once.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, topic, subject
-- upstream: verdicts, capacity, client_server_gap, health_findings, requirement_figure, series_order
with verdicts as (
    select * from verdicts where run_id = $run_id
),

capacity as (
    select * from capacity where run_id = $run_id
),

gaps as (
    select * from client_server_gap where run_id = $run_id
),

findings as (
    select * from health_findings where run_id = $run_id
),

per_requirement as (
    select
        requirement_id,
        any_value(side) as side,
        any_value(metric) as metric,
        any_value(op) as op,
        any_value(threshold) as threshold,
        any_value(min_calls_per_s) as min_calls_per_s,
        (list(iteration order by case when op in ('<', '<=') then -measured else measured end, iteration)
            filter (where is_judged))[1] as worst_iteration,
        (list(calls_per_s order by case when op in ('<', '<=') then -measured else measured end, iteration)
            filter (where is_judged))[1] as worst_calls_per_s,
        string_agg(iteration::varchar, ', ' order by iteration) filter (where is_judged) as judged_at,
        string_agg(iteration::varchar, ', ' order by iteration) filter (where is_judged and not passed) as broken_at,
        string_agg(iteration::varchar, ', ' order by iteration) filter (where is_judged and not expect_passed)
            as missed_at,
        count(*) filter (where is_judged and not passed) as broken_count,
        count(*) filter (where measured is not null) as with_data
    from verdicts
    where iteration is not null
    group by requirement_id
),

whole_run as (
    select
        verdicts.*,
        per_requirement.worst_iteration,
        per_requirement.worst_calls_per_s,
        per_requirement.judged_at,
        per_requirement.broken_at,
        per_requirement.missed_at,
        per_requirement.broken_count,
        per_requirement.with_data,
        case verdicts.metric
            when 'error_rate' then 'error rate'
            when 'error_rate_with_dropped' then 'error rate with dropped calls'
            when 'calls_per_s' then 'throughput'
            else replace(verdicts.metric, '_ms', '')
        end as metric_name,
        requirement_figure(verdicts.metric, verdicts.measured, verdicts.unit, '{:.1f}') as measured_text,
        requirement_figure(verdicts.metric, verdicts.threshold, verdicts.unit, '{:g}') as threshold_text,
        requirement_figure(verdicts.metric, verdicts.expect, verdicts.unit, '{:g}') as expect_text
    from verdicts
    join per_requirement using (requirement_id)
    where verdicts.iteration is null
),

requirement_rows as (
    select
        'requirement' as topic,
        requirement_id as subject,
        side,
        worst_iteration as iteration,
        case when passed is null then 'not judged' when passed then 'holds' else 'broken' end as status,
        measured as value,
        metric as unit,
        requirement_id || ': ' || case
            when passed is null and with_data = 0 then format('not judged: no {}-side requests{}.', side,
                coalesce(' in its scope (' || scope || ')', ''))
            when passed is null and judged_by like 'min_calls_per_s%' then format(
                'not judged: the {} side{} stayed under {:g} calls/s in every iteration.', side,
                coalesce(' (' || scope || ')', ''), min_calls_per_s
            )
            when passed is null then format('not judged: no iteration with data met its rule ({}).', judged_by)
            else format(
                '{}{} {} {} at {:.1f} calls/s (iteration {}), limit {} {}: ', side, coalesce(' (' || scope || ')', ''),
                metric_name, measured_text, worst_calls_per_s, worst_iteration, op, threshold_text
            ) || case
                -- margin_pct is null for a threshold of 0: the sentence goes without it
                when passed then format('holds at every judged iteration ({})', judged_at)
                    || coalesce(format(', smallest margin {:.0f} %', margin_pct), '')
                else format(
                    'does not hold at iteration{} {}', case when broken_count > 1 then 's' else '' end, broken_at
                ) || coalesce(format(' (margin {:.0f} %)', margin_pct), '')
            end || case
                when holds_up_to_iteration is null then '; it never held'
                else format(
                    '; holds up to iteration {}, {:.1f} calls/s', holds_up_to_iteration, holds_up_to_calls_per_s
                )
            end || case
                -- the current expectation, judged at the same iterations
                when expect_passed then format('; expectation {} {} met at every judged iteration', op, expect_text)
                when not expect_passed then format(
                    '; expectation {} {} missed at iteration{} {}', op, expect_text,
                    case when missed_at like '%,%' then 's' else '' end, missed_at
                )
                else ''
            end || '.'
        end as sentence,
        11 as sort_order
    from whole_run
),

requirements_overview as (
    select
        'requirements' as topic,
        '(all)' as subject,
        null::varchar as side,
        null::integer as iteration,
        case
            when count(passed) = 0 then 'not judged'
            when bool_and(passed) filter (where passed is not null) then 'holds'
            else 'broken'
        end as status,
        count(*) filter (where passed)::double as value,
        'requirements' as unit,
        case
            when count(*) = 0 then 'The run names no requirements.'
            when count(passed) = 0 then format('None of the {} requirements could be judged.', count(*))
            when count(*) filter (where not passed) = 0 then format(
                '{} of {} requirements hold at every judged iteration.', count(*) filter (where passed), count(*)
            )
            else format(
                '{} of {} requirements hold at every judged iteration; {} {} not: {}.',
                count(*) filter (where passed), count(*), count(*) filter (where not passed),
                case when count(*) filter (where not passed) = 1 then 'does' else 'do' end,
                string_agg(requirement_id, ', ' order by requirement_id) filter (where not passed)
            )
        end || case
            when count(*) filter (where passed is null) > 0 and count(passed) > 0
                then format(' {} not judged.', count(*) filter (where passed is null))
            else ''
        end as sentence,
        10 as sort_order
    from whole_run
),

loadgen_islands as (
    -- the iterations whose load generator ran out of CPU, consecutive ones as one range (1, 2, 3, 5 -> 1-3, 5)
    select min(iteration) as first_iteration, max(iteration) as last_iteration
    from (
        select iteration, iteration - row_number() over (order by iteration) as island
        from (
            select distinct iteration
            from findings
            where rule = 'loadgen_cpu' and severity = 'fail' and iteration is not null
        )
    )
    group by island
),

loadgen_saturated as (
    select
        string_agg(
            case when first_iteration = last_iteration then first_iteration::varchar
                else first_iteration || '-' || last_iteration end,
            ', ' order by first_iteration
        ) as iterations,
        coalesce(sum(last_iteration - first_iteration + 1), 0) as count_iterations
    from loadgen_islands
),

capacity_rows as (
    select
        'capacity' as topic,
        concat_ws(' ', side, nullif(series, '')) as subject,  -- a matrix campaign: one row per series
        side,
        knee_iteration as iteration,
        case when saturated then 'saturated' when not saturated then 'scales' else 'not judged' end as status,
        max_calls_per_s as value,
        'calls_per_s' as unit,
        format('Capacity, {} side{}: ', side, case when series <> '' then ', ' || series else '' end) || case
            when saturated and knee_iteration is not null then format(
                'throughput follows the load up to iteration {} ({}, {:.1f} calls/s) and no further; ',
                knee_iteration, knee_load, knee_calls_per_s
            )
            else ''
        end || reason || case
            when max_iteration is not null
                then format('. The highest throughput was {:.1f} calls/s, at iteration {}.', max_calls_per_s, max_iteration)
            else '.'
        end as sentence,
        20 as sort_order
    from capacity
),

-- said once per side, not once per series: which iterations' figures may measure the load generator
capacity_cautions as (
    select
        'capacity' as topic,
        side || ' caution' as subject,
        side,
        null::integer as iteration,
        'warn' as status,
        loadgen_saturated.count_iterations::double as value,
        'iterations' as unit,
        format(
            'Caution, {} side: the load generator ran out of CPU in iteration{} {}, so the capacity figures of '
            || '{} may measure it rather than the service.',
            side, case when loadgen_saturated.count_iterations > 1 then 's' else '' end, loadgen_saturated.iterations,
            case when loadgen_saturated.count_iterations > 1 then 'those iterations' else 'that iteration' end
        ) as sentence,
        21 as sort_order
    from (select distinct side from capacity) as sides
    cross join loadgen_saturated
    where loadgen_saturated.count_iterations > 0
),

widest_gap as (
    select distinct on (run_id) * from gaps where gap_avg_ms is not null order by run_id, gap_avg_ms desc, iteration
),

gap_rows as (
    select
        'client_server' as topic,
        'widest gap' as subject,
        null::varchar as side,
        iteration,
        'info' as status,
        gap_avg_ms as value,
        'ms' as unit,
        format(
            'Client against server: at iteration {} the load tool measured {:.1f} ms on average and the service '
            || 'logged {:.1f} ms, a gap of {:.1f} ms ({:+.0f} %) spent outside the service''s own timing '
            || '(network, connection setup, queues, the load generator); p95 {:.1f} against {:.1f} ms.',
            iteration, client_avg_ms, server_avg_ms, gap_avg_ms, gap_avg_pct, client_p95_ms, server_p95_ms
        ) as sentence,
        30 as sort_order
    from widest_gap
),

health_overview as (
    select
        'health' as topic,
        '(all)' as subject,
        null::varchar as side,
        null::integer as iteration,
        case
            when count(*) filter (where severity = 'fail') > 0 then 'fail'
            when count(*) filter (where severity = 'warn') > 0 then 'warn'
            else 'ok'
        end as status,
        count(*) filter (where severity <> 'ok')::double as value,
        'findings' as unit,
        format(
            'Health: {} checks over {} host{}: {} warning{} and {} failure{}.',
            count(*), count(distinct host), case when count(distinct host) = 1 then '' else 's' end,
            count(*) filter (where severity = 'warn'),
            case when count(*) filter (where severity = 'warn') = 1 then '' else 's' end,
            count(*) filter (where severity = 'fail'),
            case when count(*) filter (where severity = 'fail') = 1 then '' else 's' end
        ) as sentence,
        40 as sort_order
    from findings
    having count(*) > 0
),

health_rows as (
    select
        'health' as topic,
        host || '/' || subject || '/' || rule || '/' || coalesce(iteration::varchar, 'run') as subject,
        null::varchar as side,
        iteration,
        severity as status,
        null::double as value,
        area as unit,
        format('{} ({}{}): {}', host, area, coalesce(', iteration ' || iteration, ''), finding) as sentence,
        case severity when 'fail' then 41 else 42 end as sort_order
    from findings
    where severity <> 'ok'
),

unioned as (
    select * from requirements_overview
    union all by name
    select * from requirement_rows
    union all by name
    select * from capacity_rows
    union all by name
    select * from capacity_cautions
    union all by name
    select * from gap_rows
    union all by name
    select * from health_overview
    union all by name
    select * from health_rows
),

final as (
    select
        $run_id as run_id,
        topic,
        subject,
        side,
        iteration,
        status,
        value,
        unit,
        sentence,
        sort_order
    from unioned
)

-- a matrix's capacity rows by side, then by their series' values (message_size 7, 1024, 102400; series_order)
select * from final order by sort_order, case when topic = 'capacity' then side end, series_order(subject), subject
