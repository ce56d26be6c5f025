-- Report query behind `perfcampaign show RUN_ID`: a matrix run's throughput, p95 and failure ratio per load level
-- and series (mart capacity's points, iteration_summary's p95, error_rate and calls_per_s_per_instance), for the
-- pivots `show` prints when a side has more than one series. `is_knee` marks each series' knee.
-- upstream: capacity, iteration_summary
with points as (
    select capacity.side, capacity.series, capacity.knee_iteration, unnest(capacity.points) as point
    from capacity
    where capacity.run_id = $run_id
)

select
    points.side,
    points.series,
    points.point.load_level as load_level,
    points.point.calls_per_s as calls_per_s,
    summary.p95_ms,
    points.point.iteration = points.knee_iteration as is_knee,
    points.point.iteration as iteration,
    summary.error_rate,
    summary.calls_per_s_per_instance
from points
left join iteration_summary as summary
    on summary.run_id = $run_id and summary.side = points.side and summary.iteration = points.point.iteration
where points.side in (select side from capacity where run_id = $run_id group by side having count(*) > 1)
order by points.side, points.point.load_level, series_order(points.series), points.series, points.point.iteration
