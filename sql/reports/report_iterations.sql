-- Report query: the iterations of a run with their load as text (`vus=10`), for tables and chart marks, and as
-- JSON (`load_json`: what the load level is read from names a chart's axis).
-- grain: one row per iteration
-- upstream: iterations
select
    iteration,
    started_at,
    ended_at,
    duration_s,
    load_text(load) as load,
    load::varchar as load_json
from iterations
where run_id = $run_id
order by iteration
