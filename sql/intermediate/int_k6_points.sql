-- The k6 metric points of the run (custom metrics and dropped_iterations, k6_metric_points) with the side,
-- host and role of their source, and whether each falls in its iteration's warm-up (in_warmup): the one place
-- requirements and iteration_summary learn which points an iteration's figures leave out.
-- materialized: table
-- grain: none (one row per point)
-- upstream: k6_metric_points, sources, iterations, in_warmup
with run_sources as (
    select source_key, side, host, role, coalesce(resolution_us, 0) as resolution_us from sources where run_id = $run_id
),

windows as (
    select iteration, started_at, warmup_s from iterations where run_id = $run_id
),

final as (
    select
        run_sources.side,
        run_sources.host,
        run_sources.role,
        points.*,
        in_warmup(points.emitted_at, run_sources.resolution_us, windows.started_at, windows.warmup_s) as is_warmup
    from k6_metric_points as points
    join run_sources using (source_key)
    left join windows using (iteration)
)

select * from final
