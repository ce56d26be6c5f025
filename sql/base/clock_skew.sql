-- Clock skew of every server host against the clock of the load generator, measured from the requests
-- both sides logged, and whether the host's rows are to be placed in iterations by corrected time.
-- materialized: incremental
-- unique_key: run_id
-- grain: run_id, host -- one row per server host
-- upstream: request_facts, sources, runs, iterations, alignment_mismatch
--
-- Method `request_count_alignment`. An access log's `%t` truncates to whole seconds, so a request sent at
-- client time t lands in the server's second floor(t + skew): the server's count for its second b is the
-- number of client requests sent in [b - skew, b + 1 - skew). The skew is the shift that makes the two
-- series agree best:
--   1. coarse: every whole-second lag in [-$max_lag_s, $max_lag_s], on per-second counts;
--   2. fine: every 10 ms around the best lag (+-1.5 s), counting client requests in the shifted windows
--      from a cumulative count at 10 ms resolution.
-- The client series is every client-side request (all load generators, taken to share one clock;
-- reference_host names them, the busiest first): without a per-server tag in the warehouse, the server
-- served some share of them. Disagreement (mismatch_share, 0 = identical, 1 = disjoint) is the total
-- variation distance between the two series normalised to shares, so a host that served half of the
-- requests (round robin over two) lines up as well as one that served all, plus the share of the
-- server's requests the client did not send in the aligned window (a server cannot see more than was
-- sent: this tells a ramp of x3 steps from the same ramp shifted by one step).
-- Iterations in which the client side has no request (its results of that step were lost) are left out
-- of the server's series at every lag: compared, they would make a ramp shifted by one step fit best
-- (x2 or x3 steps look alike). Leaving them out at every lag alike cannot favour one lag.
-- Compared seconds: the host's span less its first and last (partial when a log is cut, or begins,
-- mid-second), plus a lead of $lead_s seconds before its first request, where it logged nothing (this
-- tells a log cut half way through a doubling ramp from the next steps of the client). No trailing
-- margin: a log that stops early must not be pulled towards client traffic it never saw.
-- Where several fine offsets fit equally well, skew_s is their middle and uncertainty_s their
-- half-width. With tens of requests per second this finds a 30 s skew to within 10 ms
-- (tests/unit/warehouse/test_clock_skew.py). skew_s includes the one-way network delay from client to server.
-- as_written_mismatch is the fit at lag 0 (the clocks as written): a host is corrected only when the best
-- shift's mismatch is under $max_fit_ratio (0.5) of it. With a few requests a second the per-second counts
-- fit nearly as well a second or two off by chance (a 12 s soak at 2.5 requests/s on one machine: 0.28 at
-- 2.12 s against 0.32 as written), and moving rows on such evidence would misplace them; a real skew
-- leaves about 0 against 0.3-0.9 (docs/warehouse.md).

-- The run's span widened by the search range, in epoch microseconds: timestamptz +- interval goes
-- through ICU per row (about 0.7 s per 10 M requests).
with run as (
    select
        epoch_us(started_at) - ($max_lag_s + 60)::bigint * 1000000 as from_us,
        epoch_us(ended_at) + ($max_lag_s + 60)::bigint * 1000000 as to_us
    from runs
    where run_id = $run_id
),

request_sources as (
    select source_key, side, host from sources where run_id = $run_id and side in ('server', 'client')
),

-- Nothing is measured (and no request read) unless the run has requests from both sides. The run's
-- source keys as a range: a range test costs little per request, a semi join on the key 0.5 s per 10 M.
measurable as (
    select min(source_key) as key_lo, max(source_key) as key_hi
    from request_sources
    having count(distinct side) = 2
),

-- Requests near the run only (a log that spans days must not make the search span days), counted per
-- source and 10 ms: every series below is a count, and 10 M single rows held for the rest of the query
-- cost most of its time.
timed as (
    select request_sources.side, request_sources.host, counts.centi, counts.requests
    from (
        select facts.source_key, epoch_us(facts.started_at) // 10000 as centi, count(*) as requests
        from request_facts as facts
        cross join run
        where
            facts.source_key between (select key_lo from measurable) and (select key_hi from measurable)
            and epoch_us(facts.started_at) >= run.from_us
            and epoch_us(facts.started_at) < run.to_us
        group by all
    ) as counts
    join request_sources using (source_key)
),

client_hosts as (
    select host, sum(requests)::bigint as requests from timed where side = 'client' group by host
),

reference as (
    select string_agg(host, ',' order by requests desc, host) as host, sum(requests) as requests
    from client_hosts
    having count(*) > 0
),

-- Every server host gets a row; its requests near the run are null when nothing was measured.
server_hosts as (
    select hosts.host, sum(timed.requests)::bigint as requests
    from (select distinct host from request_sources where side = 'server') as hosts
    left join timed on timed.side = 'server' and timed.host = hosts.host
    group by hosts.host
),

-- The client side's requests: per second (coarse) and per 10 ms as a cumulative count (fine).
client as (
    select centi, requests from timed where side = 'client'
),

client_seconds as (
    select centi // 100 as second, sum(requests)::bigint as requests from client group by all
),

client_centis as (
    select centi, sum(requests)::bigint as requests from client group by all
),

client_range as (
    select min(centi) as centi_lo, max(centi) + 1 as centi_hi from client_centis
),

client_before as (
    select
        positions.centi,
        coalesce(sum(client_centis.requests) over (
            order by positions.centi rows between unbounded preceding and 1 preceding
        ), 0) as requests_before
    from (select unnest(range(centi_lo, centi_hi + 1)) as centi from client_range) as positions
    left join client_centis using (centi)
),

-- The run's iterations the client side sent nothing in, as seconds of the controller's clock.
silent_iterations as (
    select
        epoch_us(iterations.started_at) // 1000000 as first_second,
        epoch_us(iterations.ended_at) // 1000000 as last_second
    from iterations
    where
        iterations.run_id = $run_id
        and not exists (
            select 1 from client_seconds
            where client_seconds.second between epoch_us(iterations.started_at) // 1000000
                and epoch_us(iterations.ended_at) // 1000000
        )
),

estimated_hosts as (
    select host
    from server_hosts
    where requests >= $min_requests and (select requests from reference) >= $min_requests
),

server_seconds as (
    select timed.host, timed.centi // 100 as second, sum(timed.requests)::bigint as requests
    from timed
    join estimated_hosts using (host)
    where timed.side = 'server'
    group by all
),

server_span as (
    select host, min(second) as first_second, max(second) as last_second
    from server_seconds
    group by host
    having count(*) > 2
),

-- One row per compared second of each host: whether it is in the lead, its share of the host's requests.
server_seconds_compared as (
    select
        span.host,
        span.second,
        span.second < span.first_second as in_lead,
        coalesce(counts.requests, 0) as server_requests
    from (
        select host, first_second, unnest(range(first_second - $lead_s::bigint, last_second)) as second
        from server_span
    ) as span
    left join server_seconds as counts using (host, second)
    where
        span.second <> span.first_second
        and not exists (
            select 1 from silent_iterations as silent
            where span.second between silent.first_second and silent.last_second
        )
),

server_series as (
    select
        host,
        second,
        in_lead,
        server_requests / sum(server_requests) over (partition by host) as server_share,
        sum(server_requests) over (partition by host) as server_total
    from server_seconds_compared
),

lags as (
    select unnest(range(-$max_lag_s::bigint, $max_lag_s::bigint + 1)) as lag_s
),

coarse_counts as materialized (
    select
        server_series.host,
        lags.lag_s,
        server_series.in_lead,
        server_series.server_share,
        server_series.server_total,
        coalesce(c.requests, 0) as client_requests
    from server_series
    cross join lags
    left join client_seconds as c on c.second = server_series.second - lags.lag_s
),

-- Totals by aggregation and a join back, not by window: 5x faster on a long run.
coarse_totals as (
    select
        host,
        lag_s,
        sum(client_requests) as client_total,
        sum(case when in_lead then 0 else client_requests end) as client_in_span
    from coarse_counts
    group by all
),

coarse_fit as (
    select
        counts.host,
        counts.lag_s,
        alignment_mismatch(counts.server_share, counts.client_requests, totals.client_total, totals.client_in_span,
            counts.server_total) as mismatch
    from coarse_counts as counts
    join coarse_totals as totals using (host, lag_s)
    where totals.client_total > 0
    group by all
),

-- lag 0 as a coarse lag is exactly the fine offset 0; 1 (disjoint) where the client sent nothing in the compared seconds
as_written as (
    select host, mismatch from coarse_fit where lag_s = 0
),

best_lag as (
    select host, arg_min(lag_s, mismatch) as lag_s from coarse_fit group by host
),

-- Fine offsets d (centiseconds) around the best lag; the client window of server second b is [b - d, b + 1 - d).
fine_windows as (
    select
        server_series.host,
        best_lag.lag_s * 100 + offsets.k as offset_cs,
        server_series.in_lead,
        server_series.server_share,
        server_series.server_total,
        least(greatest(100 * server_series.second - (best_lag.lag_s * 100 + offsets.k), r.centi_lo), r.centi_hi)
            as window_start,
        least(greatest(100 * server_series.second - (best_lag.lag_s * 100 + offsets.k) + 100, r.centi_lo), r.centi_hi)
            as window_end
    from server_series
    join best_lag using (host)
    cross join (select unnest(range(-150, 151)) as k) as offsets
    cross join client_range as r
),

fine_counts as materialized (
    select
        w.host,
        w.offset_cs,
        w.in_lead,
        w.server_share,
        w.server_total,
        e.requests_before - s.requests_before as client_requests
    from fine_windows as w
    join client_before as s on s.centi = w.window_start
    join client_before as e on e.centi = w.window_end
),

fine_totals as (
    select
        host,
        offset_cs,
        sum(client_requests) as client_total,
        sum(case when in_lead then 0 else client_requests end) as client_in_span
    from fine_counts
    group by all
),

fine_fit as (
    select
        counts.host,
        counts.offset_cs,
        alignment_mismatch(counts.server_share, counts.client_requests, totals.client_total, totals.client_in_span,
            counts.server_total) as mismatch
    from fine_counts as counts
    join fine_totals as totals using (host, offset_cs)
    where totals.client_total > 0
    group by all
),

best_fit as (
    select
        host,
        min(best) as mismatch_share,
        avg(offset_cs) filter (where mismatch <= best + 1e-9) / 100.0 as skew_s,
        (max(offset_cs) filter (where mismatch <= best + 1e-9) - min(offset_cs) filter (where mismatch <= best + 1e-9))
            / 200.0 as uncertainty_s
    from (select *, min(mismatch) over (partition by host) as best from fine_fit)
    group by host
),

-- The best fit beside the clocks as written: the evidence for a correction.
evidence as (
    select best_fit.*, coalesce(as_written.mismatch, 1) as as_written_mismatch
    from best_fit
    left join as_written using (host)
),

final as (
    select
        $run_id as run_id,
        server_hosts.host,
        (select host from reference) as reference_host,
        round(evidence.skew_s, 3) as skew_s,
        case when evidence.host is not null then 'request_count_alignment' end as method,
        evidence.uncertainty_s,
        round(evidence.mismatch_share, 4) as mismatch_share,
        case when evidence.host is not null then round(evidence.as_written_mismatch, 4) end
            as as_written_mismatch,
        server_hosts.requests as server_requests,
        (select requests from reference) as reference_requests,
        $threshold_s::double as threshold_s,
        coalesce(
            abs(evidence.skew_s) > $threshold_s
            and evidence.mismatch_share <= $max_mismatch_share
            and evidence.mismatch_share < $max_fit_ratio * evidence.as_written_mismatch,
            false
        ) as is_corrected,
        0::bigint as requests_replaced,
        0::bigint as samples_replaced,
        case
            when (select host from reference) is null then 'no client-side requests to compare with'
            when evidence.host is null then format('fewer than {} requests on one side near the run', $min_requests)
            when evidence.mismatch_share > $max_mismatch_share then format(
                'the two sides share too few requests to trust the estimate (mismatch {:.2f} > {:g}); '
                || 'times kept as written', evidence.mismatch_share, $max_mismatch_share)
            when abs(evidence.skew_s) <= $threshold_s then format('within {:g} s: times kept as written', $threshold_s)
            when evidence.mismatch_share >= $max_fit_ratio * evidence.as_written_mismatch then format(
                'the best shift fits little better than the clocks as written (mismatch {:.2f} against {:.2f}; '
                || 'a correction needs under {:g} of it): times kept as written',
                evidence.mismatch_share, evidence.as_written_mismatch, $max_fit_ratio)
            else format('more than {:g} s off: rows placed in iterations by written time - skew_s', $threshold_s)
        end as note
    from server_hosts
    left join evidence using (host)
)

select * from final
