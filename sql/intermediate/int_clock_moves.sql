-- Rows of the sources placed by corrected time (clock_corrections: access logs and self-stamped host
-- metrics of a host whose clock is corrected) that belong to another iteration once placed that way:
-- start <= written time - skew_s < end. Written times stay as written: only the facts' `iteration` is
-- updated from this table (tasks/warehouse/clock_skew.py).
-- materialized: table
-- grain: fact_table, fact_rowid -- one row per moved row; fact_table 'request' (request_facts) or 'sample'
-- (host_sample_facts)
-- upstream: clock_corrections, request_facts, host_sample_facts, iteration_buckets
with movable_sources as (
    select * from clock_corrections($run_id)
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
