-- Lines DuckDB's CSV reader refused (store_rejects), one row per line with every reason joined.
-- grain: one row per (run_id, path, line_no)
-- upstream: reject_errors (temp table written by read_csv with store_rejects = true)
insert into rejected_lines
with errors as (
    select line, error_type, error_message, csv_line from reject_errors
),

per_line as (
    select
        line as line_no,
        string_agg(distinct error_type || ': ' || error_message, '; ') as reason,
        any_value(csv_line) as excerpt
    from errors
    group by line
),

final as (
    select
        $run_id as run_id,
        $host as host,
        $path as path,
        line_no,
        reason,
        left(excerpt, 200) as excerpt
    from per_line
)

select * from final order by line_no
