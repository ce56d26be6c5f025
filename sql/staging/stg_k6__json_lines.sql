-- The lines of a k6 `--out json` file that stg_k6__points could not read (not a JSON object, or an object
-- without `type`), with their line numbers (1-based).
-- Only run when stg_k6__points found such lines: it costs a second pass over the file.
-- materialized: view
-- grain: line_no -- one row per malformed line
-- upstream: raw_k6_lines
-- raw_k6_lines: view made by tasks/warehouse/sources/k6.py: the file read as plain lines, one VARCHAR
-- column, with a delimiter and no quote that JSON text never contains, and strict_mode off so that a
-- stray \x1f keeps its line instead of failing.
-- Line numbers come from row_number() over the scan; DuckDB keeps a single file's line order there
-- (checked on 14 M lines, plain and gzip). Blank lines count as lines but are not rejected: DuckDB's
-- read_json skips them too.
with lines as (
    select
        row_number() over () as line_no,
        line
    from raw_k6_lines
),

final as (
    select
        line_no,
        case
            when not json_valid(line) then 'k6 json: not valid JSON (truncated or garbled line)'
            when json_type(line) <> 'OBJECT' then 'k6 json: a JSON ' || lower(json_type(line)) || ', not an object'
            else 'k6 json: an object without "type" (not a k6 Metric or Point)'
        end as reason,
        line
    from lines
    where
        trim(coalesce(line, '')) <> ''
        and (
            case when json_valid(line) then json_type(line) = 'OBJECT' and (line ->> 'type') is not null end
        ) is not true
)

select * from final
