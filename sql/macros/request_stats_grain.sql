-- The grain of a row of int_request_stats from grouping(host, status_code) over its three grouping sets.
-- upstream: none
create or replace temp macro request_stats_grain(set_id) as
    case set_id when 0 then 'status' when 1 then 'host' else 'side' end;
