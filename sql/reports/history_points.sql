-- Report query: every point of a campaign's series in the order the analysis reads them: series by series
-- (numbered), each oldest run first.
-- grain: one row per (series_no, run_id)
-- upstream: series
select
    dense_rank() over (order by scenario, plan_id, side, host, iteration, label, metric) as series_no,
    scenario,
    plan_id,
    side,
    host,
    iteration,
    label,
    metric,
    run_id,
    value,
    calls
from series
where campaign = $campaign
order by series_no, run_started_at, run_id
