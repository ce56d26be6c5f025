-- Report query: the site's requirement trends (tasks/site), every campaign in one query: for each requirement
-- of a campaign's last run, the figure it judges in each of the campaign's last $last_runs runs that judged
-- the same requirement (same id, side, metric and scope): the whole-run line of `verdicts` (the worst judged
-- value, at its stated iteration or load when it has one), that run's threshold and whether it held; with
-- the last run's rule, what it is judged at and its threshold (the line drawn). Failed and excluded runs flagged.
-- The history's changes on the requirement: its series are those of the same side, metric and scope (the whole
-- side: host and label '(all)'; `host`: that host; `label` without a glob: that label), one per iteration; at
-- each run, `changes` lists the change points and outliers (`change_points`) of the series of the iterations
-- the requirement judged in that run, one entry per kind (change, pending change, outlier) with the range of
-- their change_pct, their iterations and the labels that changed. `history_note` says why a requirement has no
-- series (a metric the history does not analyse, a scope it has no series of), null when it has.
-- grain: one row per (campaign, requirement_id, run_id)
-- upstream: runs, verdicts, requirements, series_values, change_points, history_exclusions
with recent as (
    select campaign, run_id, started_at, status
    from runs
    qualify row_number() over (partition by campaign order by started_at desc, run_id desc) <= $last_runs
),

last_run as (
    select campaign, run_id
    from recent
    qualify row_number() over (partition by campaign order by started_at desc, run_id desc) = 1
),

wanted as (
    select
        last_run.campaign, verdicts.requirement_id, verdicts.side, verdicts.metric, verdicts.scope, verdicts.op,
        verdicts.unit, verdicts.rule, verdicts.judged_by, verdicts.threshold as last_threshold,
        given.k6_metric, given.label_regex, given.role,
        coalesce(given.host, '(all)') as series_host, coalesce(given.label, '(all)') as series_label,
        given.label is not null and regexp_matches(given.label, '[*?\[]') as is_label_glob
    from verdicts
    join last_run using (run_id)
    join requirements as given on given.run_id = verdicts.run_id and given.requirement_id = verdicts.requirement_id
    where verdicts.iteration is null
),

excluded as (
    select distinct run_id from history_exclusions
),

shown as (
    select
        wanted.*,
        recent.run_id, recent.started_at as run_started_at, recent.status as run_status,
        excluded.run_id is not null as is_excluded,
        verdicts.measured, verdicts.threshold, verdicts.passed
    from wanted
    join recent using (campaign)
    join verdicts
        on verdicts.run_id = recent.run_id and verdicts.iteration is null and verdicts.is_judged
        and verdicts.requirement_id = wanted.requirement_id and verdicts.side = wanted.side
        and verdicts.metric = wanted.metric and verdicts.scope is not distinct from wanted.scope
    left join excluded on excluded.run_id = recent.run_id
),

analysed_metrics as (
    -- the metrics the history keeps series of on each side (marts/series_values.sql), as these runs have them
    select distinct s.side, s.metric
    from series_values as s
    join recent using (run_id)
),

has_series as (
    select distinct shown.campaign, shown.requirement_id
    from shown
    join series_values as s
        on s.run_id = shown.run_id and s.side = shown.side and s.host = shown.series_host
        and s.label = shown.series_label and s.metric = shown.metric
),

analysed as (
    -- whether the history has the requirement's series at all, else why not
    select wanted.campaign, wanted.requirement_id,
        case
            when wanted.k6_metric is not null or not exists (
                    select 1 from analysed_metrics as m where m.side = wanted.side and m.metric = wanted.metric)
                then format('The history does not analyse {}: no change points to mark (docs/history.md, Series).',
                            wanted.metric)
            when wanted.label_regex is not null or wanted.role is not null or wanted.is_label_glob
                or (wanted.series_host <> '(all)' and wanted.series_label <> '(all)')
                then format('The history has no series of {}: no change points to mark (docs/history.md, Series).',
                            wanted.scope)
            when has_series.requirement_id is null
                then format('The history has no series of {} in these runs (a side with one label, or a label '
                            'under history.label_min_calls calls): no change points to mark.', wanted.scope)
        end as history_note
    from wanted
    left join has_series using (campaign, requirement_id)
),

moved as (
    -- the change points of the requirement's series at the iterations it judged in the run
    select shown.campaign, shown.requirement_id, shown.run_id,
        case when changes.kind = 'outlier' then 'outlier' when changes.status = 'pending' then 'pending'
            else 'change' end as kind,
        min(changes.change_pct) as low_pct, max(changes.change_pct) as high_pct,
        list(distinct changes.iteration order by changes.iteration) as iterations,
        string_agg(distinct changes.label_changes, '; ') as label_changes
    from shown
    join analysed using (campaign, requirement_id)
    join verdicts as judged
        on judged.run_id = shown.run_id and judged.requirement_id = shown.requirement_id
        and judged.iteration is not null and judged.is_judged
    join change_points as changes
        on changes.run_id = shown.run_id and changes.side = shown.side and changes.host = shown.series_host
        and changes.label = shown.series_label and changes.metric = shown.metric
        and changes.iteration = judged.iteration
    where analysed.history_note is null
    group by all
),

final as (
    select
        shown.campaign, shown.requirement_id, shown.side, shown.metric, shown.scope, shown.op, shown.unit,
        shown.rule, shown.judged_by, shown.last_threshold,
        shown.run_id, shown.run_started_at, shown.run_status, shown.is_excluded,
        shown.measured, shown.threshold, shown.passed,
        analysed.history_note,
        (select list({'kind': m.kind, 'low_pct': m.low_pct, 'high_pct': m.high_pct, 'iterations': m.iterations,
                      'label_changes': m.label_changes} order by m.kind)
         from moved as m
         where m.campaign = shown.campaign and m.requirement_id = shown.requirement_id and m.run_id = shown.run_id)
            as changes
    from shown
    join analysed using (campaign, requirement_id)
)

select * from final
order by campaign, requirement_id, run_started_at, run_id
