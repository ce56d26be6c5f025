-- Public mart: per-iteration request statistics at the host level; calls_per_s = calls / duration_s.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, iteration, side, host
-- upstream: int_request_stats
with stats as (
    select * from int_request_stats where run_id = $run_id and grain = 'host'
),

final as (
    select * exclude (grain, status_code, label) from stats
)

select * from final order by iteration, side, host
