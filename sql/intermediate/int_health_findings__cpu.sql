-- Health findings, cpu rules (`cpu_idle`, and `loadgen_cpu` for a load generator): the share of vmstat
-- samples with little idle CPU in each iteration, after its warm-up. A load generator out of CPU fails the
-- iteration.
-- materialized: table
-- grain: host, subject, rule, iteration
-- upstream: int_health_thresholds, int_host_samples, int_iteration_throughput
with thresholds as (
    select * from int_health_thresholds
),

samples as (
    select * from int_host_samples where not is_since_boot and not is_warmup
),

throughput as (
    select * from int_iteration_throughput
),

cpu_busy as (
    select
        samples.host,
        samples.iteration,
        min(samples.role) as role,
        count(*) as samples,
        any_value(case when samples.role = 'loadgen' then thresholds.loadgen_cpu_idle_min_pct
            else thresholds.cpu_idle_min_pct end) as idle_min_pct,
        any_value(thresholds.cpu_busy_share_pct) as busy_share_pct,
        count(*) filter (where samples.cpu_idle_pct < case when samples.role = 'loadgen'
            then thresholds.loadgen_cpu_idle_min_pct else thresholds.cpu_idle_min_pct end) as busy_samples,
        avg(samples.cpu_idle_pct) as idle_avg,
        min(samples.cpu_idle_pct) as idle_min
    from samples
    cross join thresholds
    where samples.kind = 'vmstat' and samples.iteration is not null and samples.cpu_idle_pct is not null
    group by samples.host, samples.iteration
),

cpu_judged as (
    select
        cpu_busy.*,
        100.0 * busy_samples / samples >= busy_share_pct as is_saturated,
        throughput.calls_per_s
    from cpu_busy
    left join throughput using (iteration)
),

cpu_findings as (
    select
        host,
        'vmstat' as subject,
        case when role = 'loadgen' then 'loadgen_cpu' else 'cpu_idle' end as rule,
        case when role = 'loadgen' then 'loadgen' else 'cpu' end as area,
        iteration,
        case when not is_saturated then 'ok' when role = 'loadgen' then 'fail' else 'warn' end as severity,
        case
            when is_saturated and role = 'loadgen' then printf(
                'Load generator %s ran out of CPU in iteration %d: idle under %g %% in %d of %d samples. The '
                || 'iteration''s throughput%s measures the load generator, not the service.',
                host, iteration, idle_min_pct, busy_samples, samples,
                coalesce(printf(' (%.1f calls/s)', calls_per_s), ''))
            when is_saturated then printf(
                'CPU of %s was saturated in iteration %d: idle under %g %% in %d of %d samples (average idle '
                || '%.1f %%).', host, iteration, idle_min_pct, busy_samples, samples, idle_avg)
            when role = 'loadgen' then printf(
                'Load generator %s had CPU to spare in iteration %d (average idle %.1f %%; idle under %g %% in '
                || '%d of %d samples).', host, iteration, idle_avg, idle_min_pct, busy_samples, samples)
            else printf(
                'CPU of %s was not saturated in iteration %d (average idle %.1f %%; idle under %g %% in %d of %d '
                || 'samples).', host, iteration, idle_avg, idle_min_pct, busy_samples, samples)
        end as finding,
        json_object(
            'samples', samples, 'samples_idle_below_min', busy_samples, 'cpu_idle_min_pct', idle_min_pct,
            'cpu_busy_share_pct', busy_share_pct, 'cpu_idle_avg', round(idle_avg, 2), 'cpu_idle_min', idle_min,
            'calls_per_s', round(calls_per_s, 2)
        ) as evidence
    from cpu_judged
),

final as (
    select * from cpu_findings
)

select * from final
