-- Parses access logs' raw columns into requests (server side): one source's, or a batch of sources'.
-- materialized: view
-- grain: none (one row per logged request)
-- upstream: raw_access_log, load_context
-- raw_access_log: view made by tasks/warehouse/sources/access_log.py: the file read by DuckDB's CSV reader
-- with the columns the server's pattern says; absent fields are NULL; source_key says whose each row is
-- (load_context's for one file; a batch's from the file each row was read from).
-- load_context: duration_to_ms, time_is_end of this source (the same for every source of a batch).
-- %t is written in local time with its offset ('+0100]'): UTC = written time - offset. A log whose time
-- marks the END of the request (nginx $time_local) gets started_at = logged time - elapsed.
with raw as (
    select * from raw_access_log
),

-- The request line split once ('GET /path?q HTTP/1.1'); the offset read as one signed number (+0130 is
-- 130: 1 h 30 min; integer division truncates, so -0130 is -1 h -30 min).
split as (
    select
        *,
        string_split(request, ' ') as request_parts,
        zone_text[1:5]::bigint as zone_hhmm
    from raw
),

parsed as (
    select
        source_key,
        coalesce(method, request_parts[1]) as method,
        coalesce(url, request_parts[2]) as url,
        -- epoch microseconds in UTC: timestamptz arithmetic goes through ICU and cost 9 s per 10 M rows;
        -- integer arithmetic and make_timestamptz(microseconds) cost a fraction of a second
        epoch_us(ts_written) - (zone_hhmm // 100 * 60 + zone_hhmm % 100) * 60000000 as logged_us,
        duration * (select duration_to_ms from load_context) as elapsed_ms,
        status,
        bytes
    from split
),

final as (
    select
        source_key,
        split_part(url, '?', 1) as label,
        method,
        make_timestamptz(
            logged_us
            - case when (select time_is_end from load_context) then round(elapsed_ms * 1000)::bigint else 0 end
        ) as started_at,
        elapsed_ms,
        status as status_code,
        status >= 400 as is_error,
        bytes
    from parsed
)

select * from final
