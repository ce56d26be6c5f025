-- Host-metric samples of the hosts whose clock is corrected that belong to another iteration once placed
-- by corrected time. Only samples stamped by the host's own clock (time_basis 'own timestamps': vmstat -t,
-- docker stats timestamp lines) are moved; times computed from a manifest start time are left alone.
-- grain: one row per moved sample
-- upstream: clock_skew, host_metric_sources, host_sample_facts, iterations
create or replace temp table clock_sample_moves as
with corrected as (
    select metric_sources.source_key, clock_skew.host, clock_skew.skew_s
    from clock_skew
    join host_metric_sources as metric_sources
        on metric_sources.run_id = clock_skew.run_id and metric_sources.host = clock_skew.host
    join sources on sources.source_key = metric_sources.source_key
    where
        clock_skew.run_id = $run_id
        and clock_skew.is_corrected
        and metric_sources.time_basis = 'own timestamps'
        and sources.pinned_iteration is null
),

windows as (
    select iteration, epoch_us(started_at) as window_start_us, epoch_us(ended_at) as window_end_us
    from iterations
    where run_id = $run_id
),

samples as (
    select
        samples.rowid as fact_rowid,
        corrected.host,
        samples.iteration as written_iteration,
        epoch_us(samples.sampled_at) - round(corrected.skew_s * 1e6)::bigint as placed_us
    from host_sample_facts as samples
    join corrected using (source_key)
    where samples.run_id = $run_id and samples.sampled_at is not null
),

placed as (
    select samples.*, windows.iteration as placed_iteration
    from samples
    left join windows on samples.placed_us >= windows.window_start_us and samples.placed_us < windows.window_end_us
),

final as (
    select fact_rowid, host, placed_iteration
    from placed
    where placed_iteration is distinct from written_iteration
)

select * from final
