-- Public view: the stage hooks a run ran around its iterations (campaign `before_step` / `after_step`),
-- one row per command per host, in the order they ran, read from the manifest's `hooks` list. What a hook
-- printed is the bundle file `output`; its last 2000 characters are `output_tail` (docs/bundle-format.md).
-- materialized: view
-- grain: run_id, hook_number
-- upstream: runs
with listed as (
    select
        run_id,
        unnest(coalesce(manifest -> '$.hooks[*]', [])) as hook,
        generate_subscripts(coalesce(manifest -> '$.hooks[*]', []), 1) as hook_number
    from runs
)

select
    run_id,
    hook_number,
    (hook ->> 'iteration')::integer as iteration,
    hook ->> 'when' as phase,
    hook ->> 'host' as host,
    hook ->> 'command' as command,
    (hook ->> 'exit_code')::integer as exit_code,
    coalesce((hook ->> 'exit_code')::integer = 0, false) as passed,
    (hook ->> 'started_at')::timestamptz as started_at,
    (hook ->> 'seconds')::double as seconds,
    hook ->> 'output' as output,
    hook ->> 'output_tail' as output_tail
from listed
