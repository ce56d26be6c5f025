-- Report query: where the latest report of a run was published.
-- grain: at most one row
-- upstream: reports
select uri, created_at from reports where run_id = $run_id order by created_at desc limit 1
