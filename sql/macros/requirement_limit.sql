-- Whether a measured value meets a limit (`<`, `<=`, `>`, `>=`), and by how much in % of the limit: the one
-- rule for a requirement's spec (`threshold`) and its current expectation (`expect`). Null without a limit or
-- a value; no relative margin for a limit of 0 ("error_rate <= 0").
-- upstream: none
create or replace temp macro meets_limit(measured, op, limit_value) as
    case op
        when '<' then measured < limit_value
        when '<=' then measured <= limit_value
        when '>' then measured > limit_value
        when '>=' then measured >= limit_value
    end;

create or replace temp macro limit_margin_pct(measured, op, limit_value) as
    case
        when limit_value = 0 then null
        when op in ('<', '<=') then 100 * (limit_value - measured) / abs(limit_value)
        else 100 * (measured - limit_value) / abs(limit_value)
    end;
