-- Parses one k6 `--out json` file (NDJSON, gzip or not) into requests (client side).
-- materialized: view
-- grain: none (one row per http_req_duration Point, plus one all-NULL row per line that is not a JSON
--        object: is_malformed; the reader loads both in one pass, then deletes and counts the all-NULL rows)
-- upstream: raw_k6_json, k6_is_error
-- raw_k6_json: view made by tasks/warehouse/sources/k6.py: the file read by DuckDB's JSON reader with
-- explicit columns and ignore_errors, so no sniffing and no other field is materialised.
--
-- Time: k6 stamps every sample of a request with the END of the request. lib/netext/httpext/tracer.go
-- (grafana/k6, checked for v1.x): `Tracer.Done()` sets `trail.EndTime = done` (time.Now() when the
-- response body has been read) and `Trail.SaveSamples` gives every sample `Time: tr.EndTime`;
-- `trail.Duration = Sending + Waiting + Receiving`, i.e. http_req_duration excludes http_req_blocked
-- (pool wait, DNS, connect, TLS). So started_at = time - http_req_duration: the moment k6 began writing
-- the request on a ready connection (what the server's access log sees), and started_at + elapsed_ms
-- is k6's own end time. The file has ns; DuckDB keeps µs.
--
-- Failure: k6 emits http_req_failed = 1 exactly when its response callback says "unexpected", and tags
-- every sample with expected_response = that verdict (lib/netext/httpext/transport.go,
-- measureAndEmitMetrics). Without the tag (callback disabled, tag removed from systemTags, k6 < 0.31)
-- we apply k6's default callback: expected = status 200..399 (status 0 = no response).
with lines as (
    select type, metric, data from raw_k6_json
),

points as (
    select
        type is null as is_malformed,
        try_cast(data.time as timestamptz) as ended_at,
        data.value as elapsed_ms,
        data.tags as tags
    from lines
    -- ignore_errors turns a line that is not a JSON object into a row of NULLs: keep those to count them
    where (type = 'Point' and metric = 'http_req_duration') or type is null
),

parsed as (
    select
        is_malformed,
        coalesce(tags.name, tags.url) as label,
        tags.method as method,
        make_timestamptz(epoch_us(ended_at) - round(elapsed_ms * 1000)::bigint) as started_at,  -- no ICU arithmetic: 5x faster
        elapsed_ms,
        try_cast(tags.status as integer) as status_code,
        tags.expected_response as expected_response
    from points
),

final as (
    select
        label,
        method,
        started_at,
        elapsed_ms,
        status_code,
        k6_is_error(expected_response, status_code) as is_error,
        null::bigint as bytes,
        is_malformed
    from parsed
)

select * from final
