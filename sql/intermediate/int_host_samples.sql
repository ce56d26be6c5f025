-- Every host and JVM metric sample of the run (host_sample_facts, with its file's host, role and kind), with
-- the time that placed it in its iteration (placed_us: written time - skew for the sources clock_corrections
-- names, else as written) and whether that time falls in the iteration's warm-up (is_warmup, by in_warmup).
-- The one place host, JVM and container figures learn which samples an iteration's statistics leave out;
-- samples without a time are never in a warm-up.
-- materialized: table
-- grain: source_key, line_no, container
-- upstream: host_sample_facts, host_metric_sources, iterations, clock_corrections, in_warmup
with facts as (
    select facts.*, sources.host, sources.role, sources.kind, sources.path as source_path
    from host_sample_facts as facts
    join host_metric_sources as sources using (source_key)
    where facts.run_id = $run_id
),

corrections as (
    select source_key, skew_us from clock_corrections($run_id) where fact_table = 'sample'
),

windows as (
    select iteration, started_at, warmup_s from iterations where run_id = $run_id
),

placed as (
    select facts.*, epoch_us(facts.sampled_at) - coalesce(corrections.skew_us, 0) as placed_us
    from facts
    left join corrections using (source_key)
),

final as (
    select
        placed.*,
        in_warmup(make_timestamptz(placed.placed_us), 0, windows.started_at, windows.warmup_s) as is_warmup
    from placed
    left join windows using (iteration)
)

select * from final
