-- Report query behind `perfcampaign show RUN_ID`: each requirement over the whole run.
-- Short column names keep it inside an 80-column terminal.
select
    requirement_id as requirement,
    rule,
    min_calls_per_s as "min calls/s",
    round(measured, 3) as worst,
    case when passed is null then 'not judged' when passed then 'holds' else 'BROKEN' end as verdict,
    round(margin_pct, 1) as "margin %",
    holds_up_to_iteration as "up to it",
    round(holds_up_to_calls_per_s, 1) as "calls/s"
from verdicts
where run_id = $run_id and iteration is null
order by requirement_id
