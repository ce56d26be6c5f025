-- Public view: the history series, one row per comparable run x series key (docs/history.md): the values of
-- series_values without the runs of history_exclusions. Runs are comparable within (campaign, scenario, plan_id).
-- materialized: view
-- grain: campaign, scenario, plan_id, side, host, iteration, label, metric, run_id
-- upstream: series_values, history_exclusions
select *
from series_values
where run_id not in (select run_id from history_exclusions)
