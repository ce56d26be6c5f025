-- Rows of one source placed by corrected time (clock_corrections: an access log or self-stamped host
-- metrics of a host whose clock is corrected; the source in load_context) that belong to another iteration
-- once placed that way: by the one rule (sql/macros/place_in_iterations.sql) on written time - skew_s.
-- Written times stay as written: only the facts' `iteration` is updated from this table
-- (tasks/warehouse/clock_skew.py, once per corrected source).
-- materialized: table
-- grain: fact_table, fact_rowid -- one row per moved row; fact_table 'request' (request_facts) or 'sample'
-- (host_sample_facts)
-- upstream: clock_corrections, request_facts, host_sample_facts, load_context, placed_in_iterations
with movable_source as (
    select * from clock_corrections($run_id) where source_key = (select source_key from load_context)
),

facts as (
    select 'request' as fact_table, source_key, rowid as fact_rowid, iteration, epoch_us(started_at) as written_us
    from request_facts
    where source_key in (select source_key from movable_source where fact_table = 'request')
    union all
    select 'sample' as fact_table, source_key, rowid, iteration, epoch_us(sampled_at)
    from host_sample_facts
    where
        run_id = $run_id
        and sampled_at is not null
        and source_key in (select source_key from movable_source where fact_table = 'sample')
),

corrected_facts as (
    select
        facts.fact_table,
        facts.fact_rowid,
        movable_source.host,
        facts.iteration as written_iteration,
        facts.written_us - movable_source.skew_us as placed_us
    from facts
    join movable_source using (fact_table, source_key)
),

placed as (
    select * from placed_in_iterations('corrected_facts', placed_us)
),

final as (
    select fact_table, fact_rowid, host, iteration as placed_iteration
    from placed
    where iteration is distinct from written_iteration
)

select * from final
