-- Report query behind `perfcampaign show RUN_ID` for a soak: each drift verdict of soak_drift, in the
-- columns tasks/report/drift_words.py words (slopes per hour: % of the soak's mean; error_rate: percentage
-- points; old gen: % of its capacity).
-- grain: one row per (side, host, subject, metric)
-- upstream: soak_drift
select metric, side, host, windows, slope_pct_per_h, ci_low_pct_per_h, ci_high_pct_per_h, r2, max_pct_per_h, verdict
from soak_drift
where run_id = $run_id
order by side, host, subject, metric
