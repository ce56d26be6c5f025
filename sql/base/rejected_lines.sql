-- Lines DuckDB's CSV reader refused (store_rejects), one row per line with its main reason: a wrong
-- number of fields if that is what happened (the cast errors that follow from it are noise), else the
-- first field that could not be converted.
-- materialized: incremental
-- grain: run_id, path, line_no
-- upstream: reject_errors
-- reject_errors: temp table written by read_csv with store_rejects = true.
with errors as (
    select line, column_idx, error_type, error_message, csv_line from reject_errors
),

per_line as (
    select
        line as line_no,
        arg_min(
            error_type || ': ' || error_message,
            (case when error_type like '%COLUMNS%' then 0 else 1 end) * 100000 + coalesce(column_idx, 0)
        ) as reason,
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
