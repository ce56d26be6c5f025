-- Parses `jstat -gc` lines into JVM samples: jstat's columns become names with units, and lines that carry
-- no time of their own are placed from the manifest.
-- materialized: table -- the settings are bound parameters; the rows, parsed in Python, are few
-- grain: line_no -- one row per jstat data line
-- upstream: raw_jstat
-- raw_jstat: view made by tasks/warehouse/sources/jstat.py: one row per data line with its values by header
-- name, uptime_s from `-t` (seconds since JVM start), written_at from an ISO prefix (UTC) or NULL,
-- sample_no = k counting data lines from 0.
-- $first_sample_at, $jvm_started_at, $started_at, $interval_s: the source's options.
-- Time: written_at, else first_sample_at + (uptime - uptime of the first line), else jvm_started_at + uptime,
-- else started_at + k * interval_s. Sizes are KB as jstat prints them; counts and times since JVM start;
-- survivor = S0 + S1; gc_time_s is GCT (young + full + concurrent pauses).
with raw as (
    select
        *,
        arg_min(uptime_s, line_no) over () as first_uptime_s
    from raw_jstat
),

settings as (
    select
        $first_sample_at::timestamptz as first_sample_at,
        $jvm_started_at::timestamptz as jvm_started_at,
        $started_at::timestamptz as started_at,
        $interval_s::double as interval_s
),

final as (
    select
        line_no,
        coalesce(
            written_at,
            first_sample_at + to_microseconds(round((uptime_s - first_uptime_s) * 1000000)::bigint),
            jvm_started_at + to_microseconds(round(uptime_s * 1000000)::bigint),
            started_at + to_microseconds(round(sample_no * interval_s * 1000000)::bigint)
        ) as sampled_at,
        false as is_since_boot,
        uptime_s as jvm_uptime_s,
        s0c + s1c as survivor_capacity_kb,
        s0u + s1u as survivor_used_kb,
        ec as eden_capacity_kb,
        eu as eden_used_kb,
        oc as old_capacity_kb,
        ou as old_used_kb,
        mc as metaspace_capacity_kb,
        mu as metaspace_used_kb,
        ccsc as compressed_class_capacity_kb,
        ccsu as compressed_class_used_kb,
        ygc::bigint as young_gc_count,
        ygct as young_gc_time_s,
        fgc::bigint as full_gc_count,
        fgct as full_gc_time_s,
        cgc::bigint as concurrent_gc_count,
        cgct as concurrent_gc_time_s,
        gct as gc_time_s,
        (ygc + coalesce(fgc, 0) - lag(ygc + coalesce(fgc, 0)) over (order by line_no))::bigint
            as gc_count_since_previous
    from raw
    cross join settings
)

select * from final
