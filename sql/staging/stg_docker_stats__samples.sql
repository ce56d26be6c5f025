-- Docker stats samples as host samples: one row per container per frame (table) or per JSON line.
-- materialized: view
-- grain: line_no, container -- one row per (docker stats line, container)
-- upstream: raw_docker_stats
-- raw_docker_stats: view made by tasks/warehouse/sources/docker_stats.py: sizes already in bytes (memory
-- from binary units, network and block I/O from decimal units), percentages as numbers, NULL for docker's
-- `--`, written_at from the last timestamp line before the sample (UTC) or NULL.
-- Samples without a time stay NULL here: they count for the whole run only.
with raw as (
    select * from raw_docker_stats
),

final as (
    select
        line_no,
        container,
        written_at as sampled_at,
        false as is_since_boot,
        cpu_pct,
        mem_used_bytes,
        mem_limit_bytes,
        mem_pct,
        net_in_bytes,
        net_out_bytes,
        block_in_bytes,
        block_out_bytes,
        pids::bigint as pids
    from raw
)

select * from final
