-- Report query: one run's verdict (sql/macros/run_verdict.sql) and why, for `show` and the report header.
-- grain: one row (the run)
-- upstream: runs, validations, verdicts
select
    run_verdict(
        runs.status,
        (select success from validations where validations.run_id = runs.run_id),
        (select count(passed) from verdicts where verdicts.run_id = runs.run_id and verdicts.iteration is null),
        (select bool_and(passed) from verdicts where verdicts.run_id = runs.run_id and verdicts.iteration is null)
    ) as verdict,
    runs.status,
    runs.status_reason
from runs
where runs.run_id = $run_id
