-- Requests of the hosts whose clock is corrected (clock_skew.is_corrected) that belong to another
-- iteration once placed by corrected time: start <= started_at - skew_s < end. started_at stays as written;
-- only request_facts.iteration is updated from this table (tasks/clock_skew.py).
-- grain: one row per moved request
-- upstream: clock_skew, sources, request_facts, iterations
create or replace temp table clock_request_moves as
with corrected as (
    select sources.source_key, clock_skew.host, clock_skew.skew_s
    from clock_skew
    join sources on sources.run_id = clock_skew.run_id and sources.host = clock_skew.host
    where
        clock_skew.run_id = $run_id
        and clock_skew.is_corrected
        and sources.side = 'server'
        and sources.pinned_iteration is null
),

-- Epoch microseconds throughout: timestamptz arithmetic goes through ICU and costs ~1 s per million rows.
windows as (
    select iteration, epoch_us(started_at) as window_start_us, epoch_us(ended_at) as window_end_us
    from iterations
    where run_id = $run_id
),

facts as (
    select
        facts.rowid as fact_rowid,
        corrected.host,
        facts.iteration as written_iteration,
        epoch_us(facts.started_at) - round(corrected.skew_s * 1e6)::bigint as placed_us
    from request_facts as facts
    join corrected using (source_key)
),

-- A plain range join on the corrected time, as int_requests_by_iteration places rows.
placed as (
    select facts.*, windows.iteration as placed_iteration
    from facts
    left join windows on facts.placed_us >= windows.window_start_us and facts.placed_us < windows.window_end_us
),

final as (
    select fact_rowid, host, placed_iteration
    from placed
    where placed_iteration is distinct from written_iteration
)

select * from final
