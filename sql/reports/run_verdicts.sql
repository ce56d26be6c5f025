-- The whole-run verdict of each requirement of one run, for the ingest's summary (tasks/warehouse/verdicts.py).
select
    requirement_id, rule, measured, passed, holds_up_to_iteration, holds_up_to_calls_per_s, expect_rule, expect_passed
from verdicts
where run_id = $run_id and iteration is null
order by requirement_id
