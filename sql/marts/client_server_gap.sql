-- Public mart: the load tool's response time against the service's own, per iteration. The gap is time
-- the service's access log does not see: network, connection setup, queues in front of the service and
-- the load generator itself. Only iterations with requests on both sides have a row.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, iteration
-- upstream: iteration_summary
with client as (
    select * from iteration_summary where run_id = $run_id and side = 'client'
),

server as (
    select * from iteration_summary where run_id = $run_id and side = 'server'
),

final as (
    select
        $run_id as run_id,
        client.iteration,
        client.calls as client_calls,
        server.calls as server_calls,
        client.calls_per_s as client_calls_per_s,
        server.calls_per_s as server_calls_per_s,
        client.avg_ms as client_avg_ms,
        server.avg_ms as server_avg_ms,
        client.avg_ms - server.avg_ms as gap_avg_ms,
        case when server.avg_ms > 0 then 100 * (client.avg_ms / server.avg_ms - 1) end as gap_avg_pct,
        client.p95_ms as client_p95_ms,
        server.p95_ms as server_p95_ms,
        client.p95_ms - server.p95_ms as gap_p95_ms,
        client.error_rate as client_error_rate,
        server.error_rate as server_error_rate
    from client
    join server using (iteration)
)

select * from final order by iteration
