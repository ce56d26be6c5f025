-- Report query behind `perfcampaign show RUN_ID` for a soak: each drift verdict of soak_drift in one line.
-- Slopes per hour: % of the soak's mean (error_rate: percentage points; old gen: % of its capacity).
-- Short column names and three significant digits keep it near an 80-column terminal.
select
    replace(metric, '_after_gc_kb', '') as metric,
    side || ' ' || host as scope,
    windows as win,
    format('{:+.3g}', slope_pct_per_h) as "slope/h",
    format('{:+.3g}..{:+.3g}', ci_low_pct_per_h, ci_high_pct_per_h) as "95 % CI",
    round(r2, 2) as r2,
    format('±{:g}', max_pct_per_h) as "max",
    verdict
from soak_drift
where run_id = $run_id
order by side, host, subject, metric
