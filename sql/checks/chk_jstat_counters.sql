-- Data expectations on jstat: counters count since the JVM started, so from one line of a file to the
-- next they never decrease (a decrease is a restarted JVM, or two JVMs in one file). One row per line
-- after the first of its file, with the change of each counter since the previous line.
-- grain: one row per jstat sample but the first of each file
-- upstream: host_sample_facts, host_metric_sources
with jstat_sources as (
    select source_key, host, path as source_path
    from host_metric_sources
    where run_id = $run_id and kind = 'jstat'
),

steps as (
    select
        jstat_sources.host,
        jstat_sources.source_path,
        samples.line_no,
        samples.sampled_at,
        samples.jvm_uptime_s - lag(samples.jvm_uptime_s) over file as jvm_uptime_s_change,
        samples.young_gc_count - lag(samples.young_gc_count) over file as young_gc_count_change,
        samples.full_gc_count - lag(samples.full_gc_count) over file as full_gc_count_change,
        samples.concurrent_gc_count - lag(samples.concurrent_gc_count) over file as concurrent_gc_count_change,
        round(samples.gc_time_s - lag(samples.gc_time_s) over file, 6) as gc_time_s_change,
        row_number() over file as line_rank
    from host_sample_facts as samples
    join jstat_sources using (source_key)
    where samples.run_id = $run_id
    window file as (partition by samples.source_key order by samples.line_no)
),

final as (
    select * exclude (line_rank) from steps where line_rank > 1
)

select * from final order by source_path, line_no
