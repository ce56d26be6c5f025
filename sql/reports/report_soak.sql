-- Report query: a soak's record in run.yaml (manifest `soak`): its window length and, when its load came from
-- an earlier run (load.target_from), that run, its maximum and the target. No row for a run that is no soak.
-- grain: one row per soak run
-- upstream: runs, iterations, load_text
select
    (manifest -> 'soak' ->> 'window_s')::double as window_s,
    (select count(*) from iterations where iterations.run_id = runs.run_id) as windows,
    manifest -> 'soak' -> 'target' ->> 'run_id' as source_run_id,
    manifest -> 'soak' -> 'target' -> 'source' ->> 'campaign' as source_campaign,
    manifest -> 'soak' -> 'target' -> 'source' ->> 'key' as target_key,
    (manifest -> 'soak' -> 'target' -> 'source' ->> 'share_of_max')::double as share_of_max,
    manifest -> 'soak' -> 'target' ->> 'series' as source_series,
    (manifest -> 'soak' -> 'target' ->> 'max_iteration')::integer as max_iteration,
    load_text(manifest -> 'soak' -> 'target' -> 'max_load') as max_load,
    (manifest -> 'soak' -> 'target' ->> 'max_calls_per_s')::double as max_calls_per_s,
    (manifest -> 'soak' -> 'target' ->> 'max_load_level')::double as max_load_level,
    (manifest -> 'soak' -> 'target' ->> 'value')::double as target_value
from runs
where run_id = $run_id and json_type((manifest -> 'soak')) = 'OBJECT'
