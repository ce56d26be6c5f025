-- Host samples of the sources $source_keys stamped further outside the run than $margin_us (a year-9999 or year-0001
-- line): they leave host_sample_facts and become rejected lines, so no chart or statistic meets them
-- (tasks/warehouse/sources/base.py: reject_bad_values).
-- grain: one row per rejected sample (row_id)
-- upstream: host_sample_facts, runs
with run as (
    select epoch_us(started_at) - $margin_us as from_us, epoch_us(ended_at) + $margin_us as to_us
    from runs
    where run_id = $run_id
),

final as (
    select
        facts.rowid as row_id,
        facts.line_no,
        'value: sampled_at lies outside the run by more than the margin (thresholds.reject_outside_run_h)' as reason,
        'sampled_at=' || strftime(facts.sampled_at, '%Y-%m-%dT%H:%M:%S.%fZ') as excerpt
    from host_sample_facts as facts
    cross join run
    where
        list_contains($source_keys::bigint[], facts.source_key)
        and (epoch_us(facts.sampled_at) < run.from_us or epoch_us(facts.sampled_at) > run.to_us)
)

select * from final
