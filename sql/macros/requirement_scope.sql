-- A requirement's scope as people read it ("label /api/pull* host app1"), NULL for the whole side.
-- upstream: none
create or replace temp macro requirement_scope(label, label_regex, host, role) as
    nullif(concat_ws(' ', 'label ' || label, 'label ~ ' || label_regex, 'host ' || host, 'role ' || role), '');

-- A requirement's rule in one line, the same in every output: "server p95_ms < 500 (label /api/pull*)",
-- "client cm_handles.rate >= 50 CM-handles/s".
create or replace temp macro requirement_rule(side, metric, op, threshold, unit, scope) as
    format('{} {} {} {:g}', side, metric, op, threshold) || coalesce(' ' || unit, '')
    || coalesce(' (' || scope || ')', '');
