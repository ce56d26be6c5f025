-- Requests of the sources $source_keys (one, or a batch) whose values no request can have: a negative, NaN
-- or infinite elapsed_ms, a status outside 0 and 100..599 (0: no response, as k6 writes it), or a start outside the run widened by
-- $margin_us (a year-9999 line). They leave request_facts and become rejected lines with their reason,
-- so no average, chart or verdict is computed from them (tasks/warehouse/sources/base.py: reject_bad_values).
-- grain: one row per rejected request (row_id)
-- upstream: request_facts, runs
-- The line number is not known after parsing (NULL); the excerpt gives the values read from it.
-- line_no is NULL here (request readers do not carry it): the query returns it for the shape it shares with
-- sample_times.sql.
with run as (
    select epoch_us(started_at) - $margin_us as from_us, epoch_us(ended_at) + $margin_us as to_us
    from runs
    where run_id = $run_id
),

facts as (
    select rowid as row_id, label, started_at, elapsed_ms, status_code, epoch_us(started_at) as started_us
    from request_facts
    where list_contains($source_keys::bigint[], source_key)
),

judged as (
    select
        facts.*,
        case
            when isnan(facts.elapsed_ms) then 'elapsed_ms is NaN'
            when isinf(facts.elapsed_ms) then 'elapsed_ms is infinite'
            when facts.elapsed_ms < 0 then 'elapsed_ms is negative'
            when facts.status_code < 0 or facts.status_code between 1 and 99 or facts.status_code > 599
                then 'status ' || facts.status_code || ' is not an HTTP status (0 or 100..599)'
            when facts.started_us < run.from_us or facts.started_us > run.to_us
                then 'started_at lies outside the run by more than the margin (thresholds.reject_outside_run_h)'
        end as reason
    from facts
    cross join run
),

final as (
    select
        row_id,
        null::bigint as line_no,
        'value: ' || reason as reason,
        'started_at=' || coalesce(strftime(started_at, '%Y-%m-%dT%H:%M:%S.%fZ'), 'null')
            || ' elapsed_ms=' || coalesce(elapsed_ms::varchar, 'null')
            || ' status=' || coalesce(status_code::varchar, 'null')
            || ' label=' || coalesce(left(label, 100), 'null') as excerpt
    from judged
    where reason is not null
)

select * from final
