-- The grain of a row of int_request_stats from grouping(host, status_code, label) over its four grouping sets.
-- upstream: none
create or replace temp macro request_stats_grain(set_id) as
    case set_id when 1 then 'status' when 3 then 'host' when 6 then 'label' else 'side' end;
