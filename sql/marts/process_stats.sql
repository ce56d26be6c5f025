-- Public mart: CPU, threads and memory of every watched process (pidstat, or procfs's /proc/PID) of every host,
-- for the whole run (iteration NULL) and for each iteration it has samples in; samples are placed as in host_network_stats.
-- cpu_pct is of one CPU (up to 100 x cpu_count, as pidstat prints it); cpu_share_pct_avg is of all the host's
-- CPUs. Threads come from pidstat -v's `threads`, else from the thread lines of -t at the same time.
-- threads_first / threads_last: at the span's first and last sample that has a count.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host, command, pid, iteration -- iteration NULL for the whole run
-- upstream: host_sample_facts, host_metric_sources
with lines as (
    select facts.*, sources.host, sources.role
    from host_sample_facts as facts
    join host_metric_sources as sources using (source_key)
    where sources.run_id = $run_id and sources.kind in ('pidstat', 'procfs') and facts.pid is not null
),

thread_lines as (
    select source_key, pid, sampled_at, count(*) as threads
    from lines
    where tid is not null
    group by source_key, pid, sampled_at
),

processes as (
    select lines.*, coalesce(lines.threads, thread_lines.threads) as thread_count
    from lines
    left join thread_lines using (source_key, pid, sampled_at)
    where lines.tid is null
),

per_span as (
    select
        host,
        command,
        pid,
        iteration,
        any_value(role) as role,
        count(distinct sampled_at) as samples,
        max(cpu_count) as cpu_count,
        avg(cpu_pct) as cpu_pct_avg,
        max(cpu_pct) as cpu_pct_max,
        avg(process_cpu_user_pct) as cpu_user_pct_avg,
        avg(process_cpu_system_pct) as cpu_system_pct_avg,
        arg_min(thread_count, sampled_at) filter (where thread_count is not null) as threads_first,
        arg_max(thread_count, sampled_at) filter (where thread_count is not null) as threads_last,
        max(thread_count) as threads_max,
        max(rss_kb) as rss_max_kb,
        arg_max(rss_kb, sampled_at) filter (where rss_kb is not null) as rss_last_kb,
        max(vsz_kb) as vsz_max_kb,
        max(mem_pct) as mem_pct_max,
        max(open_files) as open_files_max,
        avg(major_faults_per_s) as major_faults_per_s,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from processes
    group by grouping sets ((host, command, pid), (host, command, pid, iteration))
    having grouping(iteration) = 1 or iteration is not null
),

final as (
    select
        $run_id as run_id,
        host,
        role,
        command,
        pid,
        iteration,
        samples,
        cpu_count,
        cpu_pct_avg,
        cpu_pct_max,
        cpu_pct_avg / nullif(cpu_count, 0) as cpu_share_pct_avg,
        cpu_user_pct_avg,
        cpu_system_pct_avg,
        threads_first,
        threads_last,
        threads_max,
        rss_max_kb,
        rss_last_kb,
        vsz_max_kb,
        mem_pct_max,
        open_files_max,
        major_faults_per_s,
        first_sampled_at,
        last_sampled_at
    from per_span
)

select * from final order by host, command, pid, iteration nulls first
