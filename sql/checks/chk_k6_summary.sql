-- Data expectations on k6: its end-of-test summary agrees with what its raw points give (see
-- sql/base/k6_summary_checks.sql). agrees is NULL when the bundle has no raw points to compare with.
-- grain: one row per (run_id, path, metric)
-- upstream: k6_summary_checks
with final as (
    select host, path, iteration, metric, summary_value, points_value, agrees
    from k6_summary_checks
    where run_id = $run_id
)

select * from final order by path, metric
