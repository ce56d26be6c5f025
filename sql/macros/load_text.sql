-- An iteration's load as people write it: its JSON map as `key=value` pairs in key order ("nodes=2 threads=5").
-- upstream: none
create or replace temp macro load_text(load) as
    array_to_string(list_transform(json_keys(load), k -> k || '=' || (load ->> k)), ' ');

-- A capacity series (`message_size=1024 delay_ms=0`, load_series) as its values, numbers compared as numbers,
-- for `order by series_order(series), series`: sizes 7, 1024, 102400 in that order, not as text
-- (1024, 102400, 7). A value that is not a number is NULL here and falls to the text order after it.
create or replace temp macro series_order(series) as
    list_transform(string_split(series, ' '), item -> try_cast(split_part(item, '=', 2) as double));
