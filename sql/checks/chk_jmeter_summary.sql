-- Data expectations on JMeter: its summariser's total (the last `summary =` line of each log) against the
-- rows of the JTL the same JMeter wrote (same host and iteration, the tested load's client side). agrees:
-- the counts within 1 %; false when the summary counted calls the JTL does not hold (or the other way).
-- Only a log pinned to one iteration (manifest `iteration`, as a campaign collects one JMeter run per step)
-- is checked: a `=` line is a running total since JMeter's start, which an iteration of a longer JMeter run
-- does not hold alone. A log without a `=` line, or unpinned (a background load's), gives no row.
-- grain: one row per (run_id, path, summariser)
-- upstream: runs (manifest), jmeter_summaries, requests
with pinned as (
    select entry ->> 'path' as path
    from (select unnest(from_json(manifest -> 'sources', '["json"]')) as entry from runs where run_id = $run_id)
    where (entry ->> 'kind') = 'jmeter_log' and (entry ->> 'iteration') is not null
),

totals as (
    select
        host,
        path,
        summariser,
        iteration,
        arg_max(samples, line_no) as summary_calls,
        arg_max(rate_per_s, line_no) as summary_rate_per_s
    from jmeter_summaries
    where run_id = $run_id and kind = '=' and iteration is not null and path in (select path from pinned)
    group by host, path, summariser, iteration
),

jtl as (
    select host, iteration, count(*) as jtl_calls
    from requests
    where run_id = $run_id and side = 'client'
    group by host, iteration
),

final as (
    select
        totals.host,
        totals.path,
        totals.summariser,
        totals.iteration,
        totals.summary_calls,
        totals.summary_rate_per_s,
        coalesce(jtl.jtl_calls, 0) as jtl_calls,
        abs(totals.summary_calls - coalesce(jtl.jtl_calls, 0))
            <= 0.01 * greatest(totals.summary_calls, coalesce(jtl.jtl_calls, 0)) as agrees
    from totals
    left join jtl on jtl.host = totals.host and jtl.iteration = totals.iteration
)

select * from final order by path, summariser
