-- Report query behind `perfcampaign runs`: one line per run, newest first.
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
    (
        select case
            when count(*) filter (where passed is not null) = 0 then 'not judged'
            when bool_and(passed) filter (where passed is not null) then 'pass'
            else 'FAIL'
        end
        from verdicts
        where verdicts.run_id = runs.run_id and verdicts.iteration is null
    ) as verdict
from runs
order by started_at desc
