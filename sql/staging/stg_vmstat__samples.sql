-- Parses vmstat rows into host samples: procps-ng's column names become names with units, and rows that
-- carry no time of their own are placed at started_at + k * interval_s.
-- materialized: table -- the settings are bound parameters; the rows, parsed in Python, are few
-- grain: line_no -- one row per vmstat data line
-- upstream: raw_vmstat
-- raw_vmstat: view made by tasks/warehouse/sources/vmstat.py: one row per data line with its values by header
-- name, written_at from `-t` or an ISO prefix (UTC) or NULL, sample_no = k counting data lines from 0.
-- $started_at, $interval_s: the source's options; $kib_per_unit: KiB per unit of its `unit` (vmstat -S).
-- The first data line (k = 0) is the average since boot: kept, flagged is_since_boot, left out of statistics.
-- Memory is in KiB, si/so in KiB/s (both written in `vmstat -S` units: procps converts them with its
-- unitConvert, whatever the man page says; converted here with kib_per_unit), bi/bo in 1 KiB blocks/s
-- (never converted), CPU columns in percent of all CPUs.
with raw as (
    select * from raw_vmstat
),

settings as (
    select
        $started_at::timestamptz as started_at,
        $interval_s::double as interval_s,
        $kib_per_unit::double as kib_per_unit
),

final as (
    select
        line_no,
        coalesce(
            written_at,
            started_at + to_microseconds(round(sample_no * interval_s * 1000000)::bigint)
        ) as sampled_at,
        sample_no = 0 as is_since_boot,
        r::integer as run_queue,
        b::integer as blocked,
        round(swpd * kib_per_unit)::bigint as swap_used_kb,
        round(free * kib_per_unit)::bigint as mem_free_kb,
        round(buff * kib_per_unit)::bigint as mem_buffer_kb,
        round(cache * kib_per_unit)::bigint as mem_cache_kb,
        round(inact * kib_per_unit)::bigint as mem_inactive_kb,
        round(active * kib_per_unit)::bigint as mem_active_kb,
        si * kib_per_unit as swap_in_kb_per_s,
        so * kib_per_unit as swap_out_kb_per_s,
        bi as blocks_in_per_s,
        bo as blocks_out_per_s,
        "in" as interrupts_per_s,
        cs as context_switches_per_s,
        us as cpu_user_pct,
        sy as cpu_system_pct,
        id as cpu_idle_pct,
        wa as cpu_wait_pct,
        st as cpu_steal_pct,
        gu as cpu_guest_pct
    from raw
    cross join settings
)

select * from final
