-- Rows of the hosts whose clock is corrected (clock_skew.is_corrected) that belong to another iteration
-- once placed by corrected time: start <= written time - skew_s < end. Requests of the host's access logs
-- move, and host-metric samples stamped by the host's own clock (time_basis 'own timestamps': vmstat -t,
-- docker stats timestamp lines); times computed from a manifest start time, and pinned sources, stay.
-- Written times stay as written: only the facts' `iteration` is updated from this table
-- (tasks/clock_skew.py).
-- grain: one row per moved row; fact_table 'request' (request_facts) or 'sample' (host_sample_facts)
-- upstream: clock_skew, sources, host_metric_sources, request_facts, host_sample_facts, iteration_buckets
create or replace temp table clock_moves as
with corrected as (
    select host, round(skew_s * 1e6)::bigint as skew_us
    from clock_skew
    where run_id = $run_id and is_corrected
),

movable_sources as (
    select sources.source_key, sources.host, corrected.skew_us, 'request' as fact_table
    from sources
    join corrected using (host)
    where sources.run_id = $run_id and sources.side = 'server' and sources.pinned_iteration is null
    union all
    select sources.source_key, sources.host, corrected.skew_us, 'sample' as fact_table
    from sources
    join host_metric_sources as metric_sources using (source_key)
    join corrected on corrected.host = sources.host
    where
        sources.run_id = $run_id
        and metric_sources.time_basis = 'own timestamps'
        and sources.pinned_iteration is null
),

facts as (
    select 'request' as fact_table, source_key, rowid as fact_rowid, iteration, epoch_us(started_at) as written_us
    from request_facts
    where source_key in (select source_key from movable_sources where fact_table = 'request')
    union all
    select 'sample' as fact_table, source_key, rowid, iteration, epoch_us(sampled_at)
    from host_sample_facts
    where
        run_id = $run_id
        and sampled_at is not null
        and source_key in (select source_key from movable_sources where fact_table = 'sample')
),

corrected_facts as (
    select
        facts.fact_table,
        facts.fact_rowid,
        movable_sources.host,
        facts.iteration as written_iteration,
        facts.written_us - movable_sources.skew_us as placed_us
    from facts
    join movable_sources using (fact_table, source_key)
),

placed as (
    select corrected_facts.*, buckets.iteration as placed_iteration
    from corrected_facts
    left join iteration_buckets($run_id) as buckets
        on corrected_facts.placed_us // iteration_bucket_width_us($run_id) = buckets.bucket_no
        and corrected_facts.placed_us >= buckets.start_us
        and corrected_facts.placed_us < buckets.end_us
),

final as (
    select fact_table, fact_rowid, host, placed_iteration
    from placed
    where placed_iteration is distinct from written_iteration
)

select * from final
