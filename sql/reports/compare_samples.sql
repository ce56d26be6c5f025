-- Report query behind the significance tests of a comparison: the raw response times of one run, iteration
-- and side, of one label or of all ($label null).
-- grain: one row per request
-- upstream: requests
select elapsed_ms
from requests
where
    run_id = $run_id
    and iteration = $iteration
    and side = $side
    and ($label is null or coalesce(label, '(none)') = $label)
    and elapsed_ms is not null
    and not is_warmup
