-- pidstat samples as host samples: one row per process (and, with -t, per thread) per interval.
-- materialized: table -- $cpu_count is a bound parameter, which a view cannot hold
-- grain: line_no -- one row per pidstat data line
-- upstream: raw_pidstat
-- raw_pidstat: view made by tasks/warehouse/sources/pidstat.py: values by pidstat's column names (NULL for a
-- report not asked for), pid = the process's (a thread line's TGID comes from the process line before it),
-- tid set on thread lines only, sampled_at from the first line's date and the line's time (UTC).
-- $cpu_count: the host's CPUs from pidstat's first line (cpu_pct is of one CPU: up to 100 x cpu_count).
with raw as (
    select * from raw_pidstat
),

final as (
    select
        line_no,
        sampled_at,
        false as is_since_boot,
        $cpu_count::integer as cpu_count,
        command,
        pid,
        tid,
        process_cpu_user_pct,
        process_cpu_system_pct,
        process_cpu_wait_pct,
        cpu_pct,
        minor_faults_per_s,
        major_faults_per_s,
        vsz_kb,
        rss_kb,
        mem_pct,
        threads::bigint as threads,
        open_files::bigint as open_files
    from raw
)

select * from final
