-- A time in ms rounded for people: three significant digits under 10 ms (a 0.04 ms median of a server that
-- logs microseconds must not read as 0), one decimal above.
-- upstream: none
create or replace temp macro round_ms(ms) as
    round(ms, case when abs(ms) < 1 then 3 when abs(ms) < 10 then 2 else 1 end);
