-- Appends one source's staged host-metric samples to host_sample_facts, each placed in its iteration:
-- start <= sampled_at < end. A sample outside every iteration keeps iteration = null: it is kept and
-- counted, never dropped. A sample without a time (docker stats with no timestamp lines) takes the source's
-- pinned iteration, else null.
-- materialized: incremental
-- grain: source_key, line_no, container -- one row per sample (docker stats: per container) of a source
-- upstream: stg_host_samples, iteration_buckets
-- stg_host_samples: the source's staging relation under one name (sources/host_metrics.py: load_samples).
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
