-- Data expectations on clocks: every server host's clock agrees with the load generator's. One row per
-- server host of the run as measured at ingest (see sql/base/clock_skew.sql).
-- grain: one row per (run_id, host)
-- upstream: clock_skew
with final as (
    select
        host,
        reference_host,
        skew_s,
        abs(skew_s) as abs_skew_s,
        uncertainty_s,
        mismatch_share,
        is_corrected,
        requests_replaced,
        note
    from clock_skew
    where run_id = $run_id
)

select * from final order by host
