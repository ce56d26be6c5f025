-- How much a counter that restarts from 0 (a container's network or block bytes) grew since its previous
-- sample: the difference, or, when it went down (the container restarted), its whole new value. NULL for a
-- first sample. Summed over samples this is what the counter counted, restarts included.
-- upstream: none
create or replace temp macro counter_increase(value, previous) as
    case
        when value is null or previous is null then null
        when value >= previous then value - previous
        else value
    end;
