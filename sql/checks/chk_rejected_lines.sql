-- Data expectations on unreadable lines: one row per source file with its share of rejected lines.
-- grain: one row per (run_id, source_path)
-- upstream: sources
with run_sources as (
    select kind, host, path as source_path, rows_loaded, rows_rejected
    from sources
    where run_id = $run_id
),

final as (
    select
        kind,
        host,
        source_path,
        rows_loaded,
        rows_rejected,
        round(100.0 * rows_rejected / nullif(rows_loaded + rows_rejected, 0), 4) as rejected_pct
    from run_sources
)

select * from final order by source_path
