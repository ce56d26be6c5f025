-- Parses the summariser lines of a jmeter.log (already split into fields by tasks/warehouse/sources/jmeter_log.py).
-- materialized: view
-- grain: line_no -- one row per summariser line of one log file
-- upstream: raw_jmeter_summaries, load_context
-- raw_jmeter_summaries: frame registered by the reader: line_no, logged_local (no zone, NULL when the line
-- had no time prefix, as on stdout), summariser (its name), kind, and the numbers as printed.
-- load_context: zone, the manifest's time zone.
-- The log's time prefix is wall-clock time in the manifest's zone.
with raw as (
    select * from raw_jmeter_summaries
),

final as (
    select
        line_no::bigint as line_no,
        timezone((select zone from load_context), logged_local::timestamp) as logged_at,
        summariser::varchar as summariser,
        kind::varchar as kind,
        samples::bigint as samples,
        window_s::integer as window_s,
        rate_per_s::double as rate_per_s,
        avg_ms::double as avg_ms,
        min_ms::double as min_ms,
        max_ms::double as max_ms,
        errors::bigint as errors,
        error_pct::double as error_pct,
        active::integer as active,
        started::integer as started,
        finished::integer as finished
    from raw
)

select * from final
