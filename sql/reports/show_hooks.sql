-- Report query behind `perfcampaign show RUN_ID`: the stage hooks run around each iteration (mart
-- iteration_hooks), the command cut to fit a terminal; the full command and output are in the mart and bundle.
select
    iteration as it,
    phase,
    host,
    coalesce(exit_code::varchar, 'not run') as exit,
    round(seconds, 2) as s,
    case when length(command) > 60 then left(command, 57) || '...' else command end as command
from iteration_hooks
where run_id = $run_id
order by hook_number
