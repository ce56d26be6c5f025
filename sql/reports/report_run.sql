-- Report query: the run's header (what, when, where its bundle is) with its requests per side, and how its
-- percentiles are taken.
-- grain: one row (the run)
-- upstream: runs, iterations, requests, percentile_method
select
    runs.run_id,
    runs.campaign,
    runs.scenario,
    runs.labels,
    runs.status,
    runs.status_reason,
    runs.started_at,
    runs.ended_at,
    runs.ingested_at,
    runs.bundle_uri,
    runs.unmapped_requests,
    runs.rejected_lines,
    runs.manifest -> 'capacity' ->> 'load_key' as capacity_load_key,
    percentile_method(runs.manifest) as percentile_method,
    (select count(*) from iterations where iterations.run_id = runs.run_id) as iterations,
    (select count(*) from requests where requests.run_id = runs.run_id and requests.side = 'server') as server_requests,
    (select count(*) from requests where requests.run_id = runs.run_id and requests.side = 'client') as client_requests
from runs
where runs.run_id = $run_id
