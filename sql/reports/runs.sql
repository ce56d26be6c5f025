-- Report query behind `perfcampaign runs`: one line per run, newest first; the verdict by sql/macros/run_verdict.sql.
select
    run_id,
    campaign,
    scenario,
    status,
    started_at,
    round(epoch(ended_at) - epoch(started_at)) as duration_s,
    (select count(*) from iterations where iterations.run_id = runs.run_id) as iterations,
    (select count(*) from requests where requests.run_id = runs.run_id) as requests,
    rejected_lines,
    run_verdict(
        runs.status,
        (select success from validations where validations.run_id = runs.run_id),
        (select count(passed) from verdicts where verdicts.run_id = runs.run_id and verdicts.iteration is null),
        (select bool_and(passed) from verdicts where verdicts.run_id = runs.run_id and verdicts.iteration is null)
    ) as verdict
from runs
order by started_at desc
