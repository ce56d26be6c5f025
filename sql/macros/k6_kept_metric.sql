-- The k6 metrics whose points k6_metric_points keeps: custom metrics (anything k6 does not emit itself)
-- and dropped_iterations. One rule for the staging model and for the reader, which skips its second pass
-- over a `--out json` file that declares none of them (tasks/warehouse/sources/k6.py).
-- upstream: none
create or replace temp macro k6_kept_metric(metric) as
    metric = 'dropped_iterations'
    or not (
        metric in ('vus', 'vus_max', 'iterations', 'iteration_duration', 'data_received', 'data_sent',
                   'checks', 'group_duration', 'http_reqs')
        or regexp_matches(metric, '^(http_req_|ws_|grpc_|browser_|webvital_)')
    );
