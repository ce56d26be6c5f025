-- Public mart: every requirement judged at every iteration on the requests of its scope, plus one
-- whole-run line (iteration null) that says whether it holds at every judged iteration and up to which
-- load it holds. An iteration is judged when its scope reached min_calls_per_s; otherwise `passed` is null.
-- `scope` says which requests were judged (requirement_scope: label, host, role), null for the whole side;
-- `rule` is the requirement in one line (requirement_rule), as every output prints it. A k6 metric's
-- requirement has `metric` = `<k6_metric>.<stat>` (`cm_handles.rate`) and its own `unit`.
-- A requirement stated at a load (`at: {iteration: N}`, `at_load: {KEY: VALUE}`, load_matches: the rule the
-- ramp uses too) is judged at those iterations only. `judged_by` says which rule judged a row ("at load
-- vus=10 and min_calls_per_s 5", "every iteration"), or why it was not judged ("not iteration 3",
-- "load is not vus=10", "no data", "under min_calls_per_s 5").
-- Two thresholds: `threshold` is the spec (`passed`, `margin_pct`), `expect` the current expectation, judged
-- with the same op on the same judged iterations (`expect_passed`, `expect_margin_pct`, `expect_rule` worded as
-- `rule`; null without one).
-- `slow_calls` counts the scope's requests at or over `slow_call_ms` (int_requirement_stats).
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, requirement_id, iteration -- iteration null for the whole-run line
-- upstream: requirements, iterations, int_requirement_stats, k6_metric_points, sources, requirement_scope,
--           load_text, meets_limit, limit_margin_pct
with given as (
    select * from requirements where run_id = $run_id
),

requirements as (
    select
        * exclude (metric),
        metric as stat,
        coalesce(k6_metric || '.' || metric, metric) as metric,
        requirement_scope(label, label_regex, host, role) as scope
    from given
),

rules as (
    select
        requirement_id,
        scope,
        unit,
        requirement_rule(side, metric, op, threshold, unit, scope) as rule,
        requirement_rule(side, metric, op, expect, unit, scope) as expect_rule,
        coalesce(nullif(concat_ws(
            ' and ', 'at iteration ' || at_iteration, 'at load ' || load_text(at_load),
            'min_calls_per_s ' || format('{:g}', min_calls_per_s)
        ), ''), 'every iteration') as judged_by
    from requirements
),

iterations as (
    select iteration, load from iterations where run_id = $run_id
),

summary as (
    select * from int_requirement_stats
),

k6_type as (
    select points.metric, any_value(points.metric_type) as metric_type
    from k6_metric_points as points
    join sources using (source_key)
    where sources.run_id = $run_id
    group by points.metric
),

measured as (
    select
        requirements.requirement_id,
        iterations.iteration,
        requirements.side,
        requirements.metric,
        requirements.op,
        requirements.threshold,
        requirements.expect,
        requirements.min_calls_per_s,
        requirements.at_iteration,
        requirements.at_load,
        (requirements.at_iteration is null or iterations.iteration = requirements.at_iteration)
            and coalesce(load_matches(iterations.load::varchar, requirements.at_load::varchar), true) as is_stated_load,
        case requirements.stat
            when 'avg_ms' then summary.avg_value
            when 'p50_ms' then summary.p50_value
            when 'p90_ms' then summary.p90_value
            when 'p95_ms' then summary.p95_value
            when 'p99_ms' then summary.p99_value
            when 'max_ms' then summary.max_value
            when 'error_rate' then summary.error_rate
            when 'error_rate_with_dropped' then summary.error_rate_with_dropped
            when 'calls_per_s' then summary.samples_per_s
            when 'avg' then summary.avg_value
            when 'min' then summary.min_value
            when 'max' then summary.max_value
            when 'p50' then summary.p50_value
            when 'p90' then summary.p90_value
            when 'p95' then summary.p95_value
            when 'p99' then summary.p99_value
            when 'count' then case when k6_type.metric_type = 'counter' then summary.total else summary.samples end
            when 'rate' then case when k6_type.metric_type = 'counter' then summary.total_per_s
                else summary.nonzero_share end
        end as measured,
        summary.samples_per_s as calls_per_s,
        summary.slow_calls,
        summary.slow_call_ms
    from requirements
    cross join iterations
    left join summary
        on summary.iteration = iterations.iteration and summary.requirement_id = requirements.requirement_id
    left join k6_type on k6_type.metric = requirements.k6_metric
),

judged as (
    select
        *,
        is_stated_load and measured is not null and coalesce(calls_per_s, 0) >= coalesce(min_calls_per_s, 0)
            as is_judged,
        -- why a row is not judged; a judged row gets the requirement's rule (rules.judged_by) in final
        case
            when not is_stated_load and at_iteration is not null then format('not iteration {}', at_iteration)
            when not is_stated_load then 'load is not ' || load_text(at_load)
            when measured is null then 'no data'
            when coalesce(calls_per_s, 0) < coalesce(min_calls_per_s, 0)
                then format('under min_calls_per_s {:g}', min_calls_per_s)
        end as not_judged_because
    from measured
),

per_iteration as (
    select
        *,
        case when is_judged then meets_limit(measured, op, threshold) end as passed,
        case when is_judged then meets_limit(measured, op, expect) end as expect_passed,
        -- no relative margin for a threshold of 0 ("error_rate <= 0"), nor for an iteration not judged
        case when is_judged then limit_margin_pct(measured, op, threshold) end as margin_pct,
        case when is_judged then limit_margin_pct(measured, op, expect) end as expect_margin_pct
    from judged
),

first_failure as (
    select requirement_id, min(iteration) filter (where is_judged and not passed) as failed_at
    from per_iteration
    group by requirement_id
),

holds_up_to as (
    select
        per_iteration.requirement_id,
        arg_max(per_iteration.iteration, per_iteration.iteration) as iteration,
        arg_max(per_iteration.calls_per_s, per_iteration.iteration) as calls_per_s
    from per_iteration
    join first_failure using (requirement_id)
    where per_iteration.passed and per_iteration.iteration < coalesce(first_failure.failed_at, 2147483647)
    group by per_iteration.requirement_id
),

whole_run as (
    select
        requirement_id,
        null::integer as iteration,
        any_value(side) as side,
        any_value(metric) as metric,
        any_value(op) as op,
        any_value(threshold) as threshold,
        any_value(expect) as expect,
        any_value(min_calls_per_s) as min_calls_per_s,
        case
            when any_value(op) in ('<', '<=') then max(measured) filter (where is_judged)
            else min(measured) filter (where is_judged)
        end as measured,
        null::double as calls_per_s,
        bool_or(is_judged) as is_judged,
        bool_and(passed) filter (where is_judged) as passed,
        min(margin_pct) filter (where is_judged) as margin_pct,
        bool_and(expect_passed) filter (where is_judged) as expect_passed,
        min(expect_margin_pct) filter (where is_judged) as expect_margin_pct,
        sum(slow_calls) filter (where is_judged)::bigint as slow_calls,
        any_value(slow_call_ms) as slow_call_ms
    from per_iteration
    group by requirement_id
),

unioned as (
    select
        $run_id as run_id,
        requirement_id,
        iteration,
        side,
        metric,
        op,
        threshold,
        min_calls_per_s,
        measured,
        calls_per_s,
        is_judged,
        passed,
        margin_pct,
        expect,
        expect_passed,
        expect_margin_pct,
        slow_calls,
        slow_call_ms,
        null::integer as holds_up_to_iteration,
        null::double as holds_up_to_calls_per_s,
        not_judged_because
    from per_iteration
    union all
    select
        $run_id as run_id,
        whole_run.requirement_id,
        whole_run.iteration,
        whole_run.side,
        whole_run.metric,
        whole_run.op,
        whole_run.threshold,
        whole_run.min_calls_per_s,
        whole_run.measured,
        whole_run.calls_per_s,
        whole_run.is_judged,
        whole_run.passed,
        whole_run.margin_pct,
        whole_run.expect,
        whole_run.expect_passed,
        whole_run.expect_margin_pct,
        whole_run.slow_calls,
        whole_run.slow_call_ms,
        holds_up_to.iteration as holds_up_to_iteration,
        holds_up_to.calls_per_s as holds_up_to_calls_per_s,
        null as not_judged_because
    from whole_run
    left join holds_up_to using (requirement_id)
),

final as (
    select
        unioned.* exclude (not_judged_because),
        rules.scope,
        rules.rule,
        rules.expect_rule,
        rules.unit,
        coalesce(unioned.not_judged_because, rules.judged_by) as judged_by
    from unioned
    join rules using (requirement_id)
)

select * from final order by requirement_id, iteration nulls last
