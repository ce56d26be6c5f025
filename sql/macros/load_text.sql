-- An iteration's load as people write it: its JSON map as `key=value` pairs in key order ("nodes=2 threads=5").
-- upstream: none
create or replace temp macro load_text(load) as
    array_to_string(list_transform(json_keys(load), k -> k || '=' || (load ->> k)), ' ');
