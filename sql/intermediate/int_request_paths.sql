-- How each side's request statistics are taken, decided once per run for every model that reads its requests:
-- from the counts of distinct durations where they repeat (`is_by_counts`: on average 10 requests or more per
-- distinct duration, as in millisecond logs; int_request_counts), else by sorting them (nearly unique durations,
-- as k6's microseconds). Both ways give the same exact figures; only their cost differs.
-- materialized: table
-- grain: side
-- upstream: requests
with requests as (
    select side, elapsed_ms
    from requests
    where run_id = $run_id
),

final as (
    select side, approx_count_distinct(elapsed_ms) * 10 <= count(*) as is_by_counts
    from requests
    group by side
)

select * from final
