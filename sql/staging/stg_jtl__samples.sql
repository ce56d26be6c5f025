-- Parses JMeter samples (a CSV or XML JTL) into client-side requests.
-- materialized: view
-- grain: none (one row per top-level sample of one JTL file)
-- upstream: raw_jtl, load_context
-- raw_jtl: view made by tasks/warehouse/sources/jtl.py over DuckDB's CSV reader, or over the samples of an
-- XML JTL: timeStamp, elapsed, label, responseCode, success, bytes; absent columns are NULL.
-- load_context: zone, the manifest's time zone.
-- timeStamp is the sample START. Epoch milliseconds (BIGINT) are UTC; a formatted time (TIMESTAMP, no
-- zone) is wall-clock time in the manifest's zone. The column's type picks the branch when the view is
-- bound, so only one conversion runs per row.
-- is_error is JMeter's own verdict (`success` negated: assertions count), not the HTTP status.
with raw as (
    select * from raw_jtl
),

timed as (
    select
        case typeof(timeStamp)
            when 'BIGINT' then make_timestamptz(timeStamp::bigint * 1000)
            when 'TIMESTAMP' then timezone((select zone from load_context), timeStamp::timestamp)
        end as started_at,
        elapsed,
        label,
        responseCode,
        success,
        bytes
    from raw
),

final as (
    select
        label::varchar as label,
        null::varchar as method,
        started_at,
        elapsed::double as elapsed_ms,
        try_cast(responseCode as integer) as status_code,
        not success::boolean as is_error,
        bytes::bigint as bytes
    from timed
)

select * from final
