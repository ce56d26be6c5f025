-- How each side's request statistics are taken, decided once per run for every model that reads its requests:
-- from the counts of distinct durations where they repeat (`is_by_counts`: on average 10 requests or more per
-- distinct duration, as in millisecond logs; int_request_counts), else by sorting them (nearly unique durations,
-- as k6's microseconds). Both ways give the same exact figures; only their cost differs.
-- Decided from request_facts per source, not through the `requests` view, which reads 2-8 times slower inside the
-- ingest's transaction (10-30 M rows): a side's distinct durations are taken as the sum of its sources' (an upper
-- bound), and a source with background labels counts towards `background` as well as its own side.
-- materialized: table
-- grain: side
-- upstream: sources, request_facts
with run_sources as (
    select source_key, side, background_labels is not null as has_background
    from sources
    where run_id = $run_id
),

per_source as (
    select source_key, count(*) as requests, approx_count_distinct(elapsed_ms) as durations
    from request_facts
    where source_key in (select source_key from run_sources)
    group by source_key
),

per_side as (
    select run_sources.side, per_source.requests, per_source.durations
    from per_source
    join run_sources using (source_key)
    union all
    select 'background' as side, per_source.requests, per_source.durations
    from per_source
    join run_sources using (source_key)
    where run_sources.has_background
),

final as (
    select side, sum(durations) * 10 <= sum(requests) as is_by_counts
    from per_side
    group by side
)

select * from final
