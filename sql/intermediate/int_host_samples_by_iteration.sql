-- Places every staged host-metric sample in its iteration: start <= sampled_at < end.
-- A sample outside every iteration keeps iteration = null: it is kept and counted, never dropped. A sample
-- without a time (docker stats with no timestamp lines) takes the source's pinned iteration, else null.
-- grain: one row per sample of one source
-- upstream: stg_host_samples (view over one source's staging macro), iterations
with staged as (
    select * from stg_host_samples
),

windows as (
    select iteration, started_at as window_start, ended_at as window_end
    from iterations
    where run_id = $run_id
),

placed as (
    select
        staged.*,
        case
            when staged.sampled_at is null then $pinned_iteration::integer
            when staged.sampled_at < windows.window_end then windows.iteration
        end as iteration
    from staged
    asof left join windows on staged.sampled_at >= windows.window_start
),

final as (
    select
        $run_id as run_id,
        $source_key::integer as source_key,
        *
    from placed
)

select * from final
