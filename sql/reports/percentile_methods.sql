-- Report query: how each of two runs takes its percentiles (macro percentile_method), so that a comparison's
-- bootstrap draws the percentile each run's figures hold.
-- grain: one row per run_id
-- upstream: runs, percentile_method
select run_id, percentile_method(manifest) as percentile_method
from runs
where run_id in ($run_a, $run_b)
