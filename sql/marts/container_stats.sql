-- Public mart: CPU, memory and I/O of every container (docker stats), for the whole run (iteration NULL) and
-- for each iteration it has samples in. Samples without a time (docker stats written without timestamp
-- lines) count for the whole run only, unless their file is pinned to one iteration.
-- Network and block bytes are counters since the container started, so a restart sets them back to 0:
-- the bytes of a span are the sum of the counters' increases from sample to sample (counter_increase: after
-- a restart, the new value). The whole run sums every sample's increase; an iteration those after the last
-- sample before its start up to the last one before its end (int_sample_windows), or those inside it for a
-- pinned file without times. `restarts` counts the samples where a counter went down.
-- mem_trend_bytes_per_h is the least-squares slope of memory use over time, fitted within each life of the
-- container (between restarts) with one common slope (NULL without times): a restart's drop is not a trend.
-- An iteration's figures leave out its warm-up (int_host_samples.is_warmup); the whole run keeps every sample.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host, container, iteration -- iteration NULL for the whole run
-- upstream: int_host_samples, int_sample_windows, counter_increase
-- measured_iteration: the iteration whose figures the sample counts in (none in its warm-up)
with docker as (
    select *, case when not is_warmup then iteration end as measured_iteration
    from int_host_samples
    where kind = 'docker_stats'
),

increases as (
    select
        *,
        counter_increase(net_in_bytes, lag(net_in_bytes ignore nulls) over series) as net_in_increase,
        counter_increase(net_out_bytes, lag(net_out_bytes ignore nulls) over series) as net_out_increase,
        counter_increase(block_in_bytes, lag(block_in_bytes ignore nulls) over series) as block_in_increase,
        counter_increase(block_out_bytes, lag(block_out_bytes ignore nulls) over series) as block_out_increase,
        coalesce(
            net_in_bytes < lag(net_in_bytes ignore nulls) over series
            or net_out_bytes < lag(net_out_bytes ignore nulls) over series
            or block_in_bytes < lag(block_in_bytes ignore nulls) over series
            or block_out_bytes < lag(block_out_bytes ignore nulls) over series,
            false
        ) as is_restart
    from docker
    window series as (partition by source_key, container order by line_no)
),

lives as (
    select *, sum(is_restart::integer) over (partition by source_key, container order by line_no) as life
    from increases
),

-- The samples whose increases each span counts: every one for the whole run (files of one container add
-- up), those after the last sample before an iteration's start up to the last before its end, and those
-- of a pinned file without times inside its iteration.
counted as (
    select host, container, null::integer as counted_iteration, true as whole_run, net_in_increase,
        net_out_increase, block_in_increase, block_out_increase, is_restart
    from increases
    union all
    select increases.host, increases.container, windows.iteration, false, increases.net_in_increase,
        increases.net_out_increase, increases.block_in_increase, increases.block_out_increase, increases.is_restart
    from int_sample_windows as windows
    join increases
        on increases.source_key = windows.source_key
        and increases.container = windows.series
        and increases.line_no > windows.start_line_no
        and increases.line_no <= windows.end_line_no
    union all
    select host, container, measured_iteration, false, net_in_increase, net_out_increase, block_in_increase,
        block_out_increase, is_restart
    from increases
    where sampled_at is null and measured_iteration is not null
),

counters as (
    select
        host,
        container,
        counted_iteration as iteration,
        whole_run,
        sum(net_in_increase) as net_in_bytes,
        sum(net_out_increase) as net_out_bytes,
        sum(block_in_increase) as block_in_bytes,
        sum(block_out_increase) as block_out_bytes,
        sum(is_restart::integer) as restarts
    from counted
    group by host, container, counted_iteration, whole_run
),

-- One slope for all lives of a container: within-life sums of squares and products, pooled.
memory_lives as (
    select
        host,
        container,
        measured_iteration as iteration,
        grouping(measured_iteration) = 1 as whole_run,
        regr_sxy(mem_used_bytes, epoch(sampled_at)) as sxy,
        regr_sxx(mem_used_bytes, epoch(sampled_at)) as sxx
    from lives
    where sampled_at is not null
    group by grouping sets ((host, container, source_key, life), (host, container, measured_iteration, source_key, life))
),

memory_trends as (
    select host, container, iteration, whole_run, sum(sxy) / nullif(sum(sxx), 0) * 3600 as mem_trend_bytes_per_h
    from memory_lives
    where whole_run or iteration is not null
    group by host, container, iteration, whole_run
),

gauges as (
    select
        host,
        container,
        measured_iteration as iteration,
        any_value(role) as role,
        count(*) as samples,
        count(sampled_at) as timed_samples,
        avg(cpu_pct) as cpu_pct_avg,
        max(cpu_pct) as cpu_pct_max,
        max(mem_used_bytes) as mem_used_max_bytes,
        max(mem_limit_bytes) as mem_limit_bytes,
        max(mem_pct) as mem_pct_max,
        max(pids) as pids_max,
        min(sampled_at) as first_sampled_at,
        max(sampled_at) as last_sampled_at
    from docker
    group by grouping sets ((host, container), (host, container, measured_iteration))
    having grouping(measured_iteration) = 1 or measured_iteration is not null
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
        memory_trends.mem_trend_bytes_per_h,
        counters.net_in_bytes,
        counters.net_out_bytes,
        counters.block_in_bytes,
        counters.block_out_bytes,
        coalesce(counters.restarts, 0) as restarts,
        gauges.pids_max,
        gauges.first_sampled_at,
        gauges.last_sampled_at
    from gauges
    left join counters
        on counters.host = gauges.host
        and counters.container = gauges.container
        and counters.whole_run = (gauges.iteration is null)
        and (counters.whole_run or counters.iteration = gauges.iteration)
    left join memory_trends
        on memory_trends.host = gauges.host
        and memory_trends.container = gauges.container
        and memory_trends.whole_run = (gauges.iteration is null)
        and (memory_trends.whole_run or memory_trends.iteration = gauges.iteration)
)

select * from final order by host, container, iteration nulls first
