-- Appends one source's staged host-metric samples to host_sample_facts, each placed in its iteration by the
-- one rule (sql/macros/place_in_iterations.sql; resolution 0: start <= sampled_at < end). A sample outside
-- every iteration keeps iteration = null: it is kept and counted, never dropped. A sample without a time
-- (docker stats with no timestamp lines) takes the source's pinned iteration, else null.
-- materialized: incremental
-- grain: source_key, line_no, container -- one row per sample (docker stats: per container) of a source
-- upstream: stg_host_samples, load_context, placed_in_iterations
-- stg_host_samples: the source's staging relation under one name (sources/host_metrics.py: load_samples).
with final as (
    select
        (select run_id from load_context) as run_id,
        (select source_key from load_context) as source_key,
        *
    from placed_in_iterations('stg_host_samples', epoch_us(sampled_at))
)

select * from final
