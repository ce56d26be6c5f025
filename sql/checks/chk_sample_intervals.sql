-- Data expectations on sampling: samples arrive at their interval, without gaps. One row per pair of
-- consecutive samples of a series (a file; per container for docker stats) that has times, with the gap
-- between them. The series' interval is its median gap; a gap is allowed up to 1.5 intervals, plus one
-- second when every time of the series is a whole second (vmstat -t stamps: a 1 s sampler can show 2 s).
-- grain: one row per sample with a previous sample in its series
-- upstream: host_sample_facts, host_metric_sources
with metric_sources as (
    select source_key, host, kind, path as source_path
    from host_metric_sources
    where run_id = $run_id
),

timed as (
    select
        metric_sources.host,
        metric_sources.kind,
        metric_sources.source_path,
        coalesce(samples.container, '') as container,
        samples.source_key,
        samples.line_no,
        samples.sampled_at,
        epoch(samples.sampled_at) - epoch(lag(samples.sampled_at) over series) as gap_s
    from host_sample_facts as samples
    join metric_sources using (source_key)
    where samples.run_id = $run_id and samples.sampled_at is not null
    window series as (partition by samples.source_key, samples.container order by samples.sampled_at, samples.line_no)
),

series as (
    select
        source_key,
        container,
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
    join series using (source_key, container)
    where timed.gap_s is not null and series.samples >= 3
)

select * from final order by source_path, container, sampled_at, line_no
