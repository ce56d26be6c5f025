-- Public mart: CPU, memory and I/O of every container (docker stats), for the whole run (iteration NULL) and
-- for each iteration it has samples in. Samples without a time (docker stats written without timestamp
-- lines) count for the whole run only, unless their file is pinned to one iteration.
-- Network and block bytes are counters since the container started: the whole run counts each file's last
-- sample minus its first; an iteration counts the last sample before its end minus the last one before its
-- start (int_sample_windows), or last minus first inside it for a pinned file without times.
-- mem_trend_bytes_per_h is the least-squares slope of memory use over time (NULL without times).
-- grain: one row per (run_id, host, container, iteration), iteration NULL for the whole run
-- upstream: host_sample_facts, host_metric_sources, int_sample_windows, counter_span (sql/macros)
with docker as (
    select facts.*, sources.host, sources.role
    from host_sample_facts as facts
    join host_metric_sources as sources using (source_key)
    where sources.run_id = $run_id and sources.kind = 'docker_stats'
),

run_counters as (
    -- each file counts its own last sample minus its first; files of one container add up
    select host, container, sum(net_in_bytes) as net_in_bytes, sum(net_out_bytes) as net_out_bytes,
        sum(block_in_bytes) as block_in_bytes, sum(block_out_bytes) as block_out_bytes
    from (
        select
            host,
            container,
            source_key,
            counter_span(net_in_bytes, line_no) as net_in_bytes,
            counter_span(net_out_bytes, line_no) as net_out_bytes,
            counter_span(block_in_bytes, line_no) as block_in_bytes,
            counter_span(block_out_bytes, line_no) as block_out_bytes
        from docker
        group by host, container, source_key
    )
    group by host, container
),

window_counters as (
    select
        first_sample.host,
        first_sample.container,
        windows.iteration,
        last_sample.net_in_bytes - first_sample.net_in_bytes as net_in_bytes,
        last_sample.net_out_bytes - first_sample.net_out_bytes as net_out_bytes,
        last_sample.block_in_bytes - first_sample.block_in_bytes as block_in_bytes,
        last_sample.block_out_bytes - first_sample.block_out_bytes as block_out_bytes
    from int_sample_windows as windows
    join docker as first_sample
        on first_sample.source_key = windows.source_key and first_sample.line_no = windows.start_line_no
    join docker as last_sample
        on last_sample.source_key = windows.source_key and last_sample.line_no = windows.end_line_no
),

pinned_counters as (
    -- samples without a time, placed by their file's pinned iteration: last minus first inside it
    select
        host,
        container,
        iteration,
        counter_span(net_in_bytes, line_no) as net_in_bytes,
        counter_span(net_out_bytes, line_no) as net_out_bytes,
        counter_span(block_in_bytes, line_no) as block_in_bytes,
        counter_span(block_out_bytes, line_no) as block_out_bytes
    from docker
    where sampled_at is null and iteration is not null
    group by host, container, source_key, iteration
),

iteration_counters as (
    select host, container, iteration, sum(net_in_bytes) as net_in_bytes, sum(net_out_bytes) as net_out_bytes,
        sum(block_in_bytes) as block_in_bytes, sum(block_out_bytes) as block_out_bytes
    from (select * from window_counters union all select * from pinned_counters)
    group by host, container, iteration
),

gauges as (
    select
        host,
        container,
        iteration,
        any_value(role) as role,
        count(*) as samples,
        count(sampled_at) as timed_samples,
        avg(cpu_pct) as cpu_pct_avg,
        max(cpu_pct) as cpu_pct_max,
        max(mem_used_bytes) as mem_used_max_bytes,
        max(mem_limit_bytes) as mem_limit_bytes,
        max(mem_pct) as mem_pct_max,
        regr_slope(mem_used_bytes, epoch(sampled_at)) * 3600 as mem_trend_bytes_per_h,
        max(pids) as pids_max,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from docker
    group by grouping sets ((host, container), (host, container, iteration))
    having grouping(iteration) = 1 or iteration is not null
),

final as (
    select
        $run_id as run_id,
        gauges.host,
        gauges.role,
        gauges.container,
        gauges.iteration,
        gauges.samples,
        gauges.timed_samples,
        gauges.cpu_pct_avg,
        gauges.cpu_pct_max,
        gauges.mem_used_max_bytes,
        gauges.mem_limit_bytes,
        gauges.mem_pct_max,
        gauges.mem_trend_bytes_per_h,
        coalesce(iteration_counters.net_in_bytes, run_counters.net_in_bytes) as net_in_bytes,
        coalesce(iteration_counters.net_out_bytes, run_counters.net_out_bytes) as net_out_bytes,
        coalesce(iteration_counters.block_in_bytes, run_counters.block_in_bytes) as block_in_bytes,
        coalesce(iteration_counters.block_out_bytes, run_counters.block_out_bytes) as block_out_bytes,
        gauges.pids_max,
        gauges.first_sampled_at,
        gauges.last_sampled_at
    from gauges
    left join iteration_counters
        on gauges.iteration is not null
        and iteration_counters.host = gauges.host
        and iteration_counters.container = gauges.container
        and iteration_counters.iteration = gauges.iteration
    left join run_counters
        on gauges.iteration is null
        and run_counters.host = gauges.host
        and run_counters.container = gauges.container
)

select * from final order by host, container, iteration nulls first
