-- Report query behind `perfcampaign show RUN_ID`: each requirement over the whole run, the spec (`rule`) and the
-- current expectation (`expect`, met or MISSED at every judged iteration), and the slow calls of its scope.
-- Short column names keep it inside an 80-column terminal.
-- upstream: verdicts
select
    requirement_id as requirement,
    rule,
    min_calls_per_s as "min calls/s",
    round(measured, 3) as worst,
    case when passed is null then 'not judged' when passed then 'holds' else 'BROKEN' end as verdict,
    round(margin_pct, 1) as "margin %",
    format('{} {:g}', op, expect)
        || case when expect_passed then ': met' when not expect_passed then ': MISSED' else '' end as expect,
    holds_up_to_iteration as "up to it",
    round(holds_up_to_calls_per_s, 1) as "calls/s",
    format('{} >= {:g}', slow_calls, slow_call_ms) as "slow (ms)"
from verdicts
where run_id = $run_id and iteration is null
order by requirement_id
