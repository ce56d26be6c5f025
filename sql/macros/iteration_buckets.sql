-- Where rows find their iteration: `start <= t < end`, by a hash join on a bucket of time plus that
-- exact test. A plain range join sorted all 10 M requests of a run (piecewise merge join, 11 s); an ASOF
-- join held 3.5 GB; the bucket join takes 0.2 s. A bucket is one second, or wider when the run is long,
-- so that there are never more than ~100 000 of them. Iterations never overlap, so at most one candidate
-- passes the exact test. Times are epoch microseconds: timestamptz arithmetic goes through ICU.
-- Use:
--   left join iteration_buckets(run) as b
--       on t_us // iteration_bucket_width_us(run) = b.bucket_no and t_us >= b.start_us and t_us < b.end_us
-- upstream: iterations
create or replace temp macro iteration_bucket_width_us(run) as (
    select greatest(1000000, (max(epoch_us(ended_at)) - min(epoch_us(started_at))) // 100000)
    from iterations
    where run_id = run
);

create or replace temp macro iteration_buckets(run) as table
    select
        iteration,
        epoch_us(started_at) as start_us,
        epoch_us(ended_at) as end_us,
        unnest(range(
            epoch_us(started_at) // iteration_bucket_width_us(run),
            epoch_us(ended_at) // iteration_bucket_width_us(run) + 1
        )) as bucket_no
    from iterations
    where run_id = run;
