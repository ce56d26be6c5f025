-- Data expectations on sampling: samples arrive at their interval, without gaps. One row per pair of
-- consecutive sample times of a series (a file; per container for docker stats) that has times, with the gap
-- between them. The series' interval is its median gap; a gap is allowed up to 1.5 intervals, plus one
-- second when every time of the series is a whole second (vmstat -t stamps: a 1 s sampler can show 2 s).
-- grain: one row per sample time with a previous one in its series
-- upstream: host_sample_facts, host_metric_sources
with metric_sources as (
    select source_key, host, kind, path as source_path
    from host_metric_sources
    where run_id = $run_id
),

-- One row per sample time of a series: sar and pidstat write a row per interface, disk or process at each
-- time, and the zero gaps between those rows would make the series' interval 0. A pidstat series is one
-- process (pid): a process watched by name (k6) lives one iteration, and the pause is no sampling gap.
stamps as (
    select
        samples.source_key,
        coalesce(samples.container, '') as container,
        coalesce(samples.pid, 0) as pid,
        samples.sampled_at,
        min(samples.line_no) as line_no
    from host_sample_facts as samples
    where samples.run_id = $run_id and samples.sampled_at is not null
    group by all
),

timed as (
    select
        metric_sources.host,
        metric_sources.kind,
        metric_sources.source_path,
        stamps.container,
        stamps.source_key,
        stamps.pid,
        stamps.line_no,
        stamps.sampled_at,
        epoch(stamps.sampled_at) - epoch(lag(stamps.sampled_at) over series) as gap_s
    from stamps
    join metric_sources using (source_key)
    window series as (partition by stamps.source_key, stamps.container, stamps.pid order by stamps.sampled_at)
),

series as (
    select
        source_key,
        container,
        pid,
        median(gap_s) as interval_s,
        bool_and(epoch(sampled_at) = floor(epoch(sampled_at))) as whole_seconds,
        count(*) as samples
    from timed
    group by all
),

final as (
    select
        timed.host,
        timed.kind,
        timed.source_path,
        timed.container,
        timed.line_no,
        timed.sampled_at,
        round(timed.gap_s, 3) as gap_s,
        round(series.interval_s, 3) as interval_s,
        round(1.5 * series.interval_s + case when series.whole_seconds then 1 else 0 end, 3) as allowed_gap_s
    from timed
    join series using (source_key, container, pid)
    where timed.gap_s is not null and series.samples >= 3
)

select * from final order by source_path, container, sampled_at, line_no
