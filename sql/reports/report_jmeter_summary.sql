-- Report query: JMeter's own summary beside the warehouse's figures, per iteration. JMeter's side: the last
-- `summary =` total of each generator's log (its busiest summariser, should a plan have several), summed over
-- the generators; the warehouse's: the client side of iteration_summary (the JTL rows in the load's window).
-- No row for an iteration without summariser lines (a k6 run has none).
-- grain: one row per iteration
-- upstream: jmeter_summaries, iteration_summary
with totals as (
    select
        path,
        summariser,
        iteration,
        arg_max(samples, line_no) as calls,
        arg_max(rate_per_s, line_no) as rate_per_s,
        arg_max(errors, line_no) as errors
    from jmeter_summaries
    where run_id = $run_id and kind = '=' and iteration is not null
    group by path, summariser, iteration
),

per_log as (
    select path, iteration, arg_max(calls, calls) as calls, arg_max(rate_per_s, calls) as rate_per_s,
        arg_max(errors, calls) as errors
    from totals
    group by path, iteration
),

per_iteration as (
    select
        iteration,
        count(*) as generators,
        sum(calls) as jmeter_calls,
        sum(rate_per_s) as jmeter_calls_per_s,
        sum(errors) as jmeter_errors
    from per_log
    group by iteration
),

final as (
    select
        per_iteration.*,
        summary.calls as warehouse_calls,
        summary.calls_per_s as warehouse_calls_per_s,
        summary.errors as warehouse_errors
    from per_iteration
    left join iteration_summary as summary
        on summary.run_id = $run_id and summary.iteration = per_iteration.iteration and summary.side = 'client'
)

select * from final order by iteration
