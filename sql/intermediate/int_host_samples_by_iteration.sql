-- Places every staged host-metric sample in its iteration: start <= sampled_at < end.
-- A sample outside every iteration keeps iteration = null: it is kept and counted, never dropped. A sample
-- without a time (docker stats with no timestamp lines) takes the source's pinned iteration, else null.
-- grain: one row per sample of one source
-- upstream: stg_host_samples (view over one source's staging macro), iteration_buckets (sql/macros)
with staged as (
    select * from stg_host_samples
),

placed as (
    select
        staged.*,
        case when staged.sampled_at is null then $pinned_iteration::integer else buckets.iteration end as iteration
    from staged
    left join iteration_buckets($run_id) as buckets
        on epoch_us(staged.sampled_at) // iteration_bucket_width_us($run_id) = buckets.bucket_no
        and epoch_us(staged.sampled_at) >= buckets.start_us
        and epoch_us(staged.sampled_at) < buckets.end_us
),

final as (
    select
        $run_id as run_id,
        $source_key::integer as source_key,
        *
    from placed
)

select * from final
