-- Health findings, data rule (`samples`): every host gets a row for every kind of metrics it has in every
-- iteration, so every iteration of every host has a finding or an explicit ok.
-- materialized: table
-- grain: host, subject, rule, iteration
-- upstream: iterations, host_metric_sources, sources, host_samples
with iterations as (
    select iteration from iterations where run_id = $run_id
),

metric_sources as (
    select metric_sources.*, loaded.pinned_iteration
    from host_metric_sources as metric_sources
    join sources as loaded using (source_key)
    where metric_sources.run_id = $run_id
),

samples as (
    select * from host_samples where run_id = $run_id and not is_since_boot
),

kinds as (
    select
        host,
        kind,
        bool_or(time_basis not like 'none%' or pinned_iteration is not null) as is_placeable,
        count(*) as files
    from metric_sources
    group by host, kind
),

coverage as (
    select kinds.host, kinds.kind, kinds.is_placeable, iterations.iteration, count(samples.line_no) as samples
    from kinds
    cross join iterations
    left join samples
        on samples.host = kinds.host and samples.kind = kinds.kind and samples.iteration = iterations.iteration
    group by kinds.host, kinds.kind, kinds.is_placeable, iterations.iteration
),

coverage_findings as (
    select
        host,
        kind as subject,
        'samples' as rule,
        'data' as area,
        iteration,
        case when samples > 0 then 'ok' else 'warn' end as severity,
        case
            when samples > 0 then printf('%s has %d %s samples in iteration %d.', host, samples, kind, iteration)
            when not is_placeable then printf(
                'The %s samples of %s carry no timestamps: they count for the whole run only, so iteration %d '
                || 'cannot be judged on them.', kind, host, iteration)
            else printf('%s has no %s samples in iteration %d: the monitor stopped, started late, or its clock '
                || 'is off.', host, kind, iteration)
        end as finding,
        json_object('kind', kind, 'samples', samples, 'has_times', is_placeable) as evidence
    from coverage
),

final as (
    select * from coverage_findings
)

select * from final
