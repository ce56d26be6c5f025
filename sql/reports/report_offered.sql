-- Report query behind the report's and `perfcampaign show`'s "offered against achieved" table: per step and
-- side, the load offered (an open model's planned rate, or the calls sent + dropped per second), the calls
-- made per second, their share of the calls offered, the calls dropped and the error rate counting the
-- dropped ones as failed (mart iteration_summary, docs/warehouse.md). No rows unless the run offered a rate
-- or dropped a call: a closed model offers none, and then the table says nothing the iterations table does not.
-- grain: one row per (iteration, side), background load aside
-- upstream: iteration_summary, iterations
with summary as (
    select iteration, side, offered_per_s, achieved_per_s, calls, dropped, error_rate, error_rate_with_dropped
    from iteration_summary
    where run_id = $run_id and side <> 'background'
),

final as (
    select
        summary.iteration,
        load_text(iterations.load) as load,
        summary.side,
        summary.offered_per_s,
        summary.achieved_per_s,
        summary.calls / nullif(summary.calls + summary.dropped, 0) as achieved_share,
        summary.dropped,
        summary.error_rate,
        summary.error_rate_with_dropped
    from summary
    join iterations on iterations.run_id = $run_id and iterations.iteration = summary.iteration
    where exists (select 1 from summary where offered_per_s is not null or dropped > 0)
)

select * from final order by iteration, side
