-- Parses one k6 `--out csv` file into requests (client side), whatever its k6 version wrote.
-- materialized: view
-- grain: none (one row per http_req_duration row of the file)
-- upstream: raw_k6_csv, k6_is_error
-- raw_k6_csv: view made by tasks/warehouse/sources/k6.py: the file read by DuckDB's CSV reader, every
-- column as text, named by the file's own header; lines it cannot split go to rejects.
--
-- Header: `metric_name,timestamp,metric_value,` then one column per indexed system tag, sorted by name
-- (which ones depends on the k6 version and the systemTags option), then `extra_tags` (and `metadata`
-- in newer k6 such as 1.1). An absent tag column reads as NULL here, and so does an empty cell (CSV cannot tell
-- an empty tag from a missing one).
-- timestamp: the CSV output's timeFormat option (output/csv/config.go and time_format_gen.go in
-- grafana/k6): `unix` (default, whole seconds, truncated), `unix_milli`, `unix_micro`, `unix_nano`, or
-- `rfc3339` (seconds, with the writer's zone offset). An integer's unit follows from its size for any date
-- after 1973; a decimal is read as seconds. Like every k6 sample time it is the END of the request
-- (see stg_k6__points.sql), so started_at = timestamp - elapsed_ms. With the default `unix` format the
-- end is only known to the second: started_at can be up to 1 s early.
-- is_error: as in stg_k6__points.sql (expected_response, else k6's default 200..399 rule).
with template as (
    -- the columns this model reads, so that a file without some of them still has them (as NULL)
    select
        null::varchar as metric_name,
        null::varchar as "timestamp",
        null::varchar as metric_value,
        null::varchar as name,
        null::varchar as url,
        null::varchar as method,
        null::varchar as status,
        null::varchar as expected_response
    where false
),

raw as (
    select metric_name, "timestamp", metric_value, name, url, method, status, expected_response
    from (select * from template union all by name select * from raw_k6_csv)
    where metric_name = 'http_req_duration'
),

parsed as (
    select
        coalesce(nullif(name, ''), nullif(url, '')) as label,
        nullif(method, '') as method,
        case
            when not contains("timestamp", '.') and try_cast("timestamp" as bigint) is not null then
                to_timestamp(0) + to_microseconds(
                    case
                        when "timestamp"::bigint < 100000000000 then "timestamp"::bigint * 1000000
                        when "timestamp"::bigint < 100000000000000 then "timestamp"::bigint * 1000
                        when "timestamp"::bigint < 100000000000000000 then "timestamp"::bigint
                        else "timestamp"::bigint // 1000
                    end
                )
            when try_cast("timestamp" as double) is not null then to_timestamp("timestamp"::double)
            else try_cast("timestamp" as timestamptz)
        end as ended_at,
        try_cast(metric_value as double) as elapsed_ms,
        try_cast(status as integer) as status_code,
        expected_response
    from raw
),

final as (
    select
        label,
        method,
        make_timestamptz(epoch_us(ended_at) - round(elapsed_ms * 1000)::bigint) as started_at,  -- no ICU arithmetic: 5x faster
        elapsed_ms,
        status_code,
        k6_is_error(expected_response, status_code) as is_error,
        null::bigint as bytes
    from parsed
)

select * from final
