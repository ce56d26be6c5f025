-- Report query behind the comparison table in the form users publish: every requirement of run B at every
-- iteration, with run A's value of the same requirement (same id, side, metric and scope; otherwise A's value of
-- that side and metric when the requirement covers its whole side) at the same iteration index, and both
-- iterations' loads. `tested_label`: the one label a requirement is scoped to (an exact label, no host, role
-- or k6 metric), whose per-label test of the comparison judges it; '(all)' for a whole side. `expect` and
-- `expect_passed`: B's current expectation and whether B met it there (verdicts).
-- grain: one row per (requirement_id, iteration)
-- upstream: verdicts, iteration_summary, iterations, requirements
with b as (
    select * from verdicts where run_id = $run_b and iteration is not null
),

a_verdicts as (
    select requirement_id, iteration, side, metric, scope, measured
    from verdicts
    where run_id = $run_a and iteration is not null
),

one_label as (
    select requirement_id, label
    from requirements
    where
        run_id = $run_b and label is not null and not regexp_matches(label, '[*?\[]')
        and label_regex is null and host is null and role is null and k6_metric is null
),

a_summary as (
    unpivot (
        select iteration, side, calls_per_s, error_rate, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms
        from iteration_summary
        where run_id = $run_a
    )
    on calls_per_s, error_rate, avg_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms
    into name metric value value
),

final as (
    select
        b.requirement_id,
        b.iteration,
        load_text(it.load) as load,
        load_text(it_a.load) as load_a,
        b.side,
        b.scope,
        case when b.scope is null then '(all)' else one_label.label end as tested_label,
        b.rule,
        b.metric,
        b.op,
        b.threshold,
        b.expect,
        b.expect_passed,
        b.unit,
        coalesce(a_verdicts.measured, a_summary.value) as before,
        b.measured as after,
        case when coalesce(a_verdicts.measured, a_summary.value) <> 0
            then 100 * (b.measured / coalesce(a_verdicts.measured, a_summary.value) - 1) end as change_pct,
        b.is_judged,
        b.passed
    from b
    left join a_verdicts
        on a_verdicts.requirement_id = b.requirement_id and a_verdicts.iteration = b.iteration
        and a_verdicts.side = b.side and a_verdicts.metric = b.metric and a_verdicts.scope is not distinct from b.scope
    left join a_summary
        on a_summary.iteration = b.iteration and a_summary.side = b.side and a_summary.metric = b.metric
        and b.scope is null
    left join one_label on one_label.requirement_id = b.requirement_id
    left join iterations as it on it.run_id = $run_b and it.iteration = b.iteration
    left join iterations as it_a on it_a.run_id = $run_a and it_a.iteration = b.iteration
)

select * from final order by requirement_id, iteration
