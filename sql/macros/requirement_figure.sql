-- A requirement's value as people read it, the same for the measured value, the spec and the expectation: an
-- error rate (a fraction in the warehouse) in %, a throughput in calls/s, a time in ms, a k6 metric in its own
-- `unit` (nothing when it has none). `digits` is the format of the number ('{:.1f}', '{:g}' for a limit); a rate
-- always gets two decimals as a measured value.
-- upstream: none
create or replace temp macro metric_unit_text(metric, unit) as
    case
        when metric in ('error_rate', 'error_rate_with_dropped') then '%'
        when metric = 'calls_per_s' then 'calls/s'
        when metric like '%.%' then unit  -- a k6 metric (`name.stat`; request metrics have no dot)
        else 'ms'
    end;

create or replace temp macro requirement_figure(metric, value, unit, digits) as
    format(
        case when digits = '{:.1f}' and metric in ('error_rate', 'error_rate_with_dropped') then '{:.2f}'
             when digits = '{:.1f}' and metric like '%.%' then '{:.4g}'
             else digits end,
        case when metric in ('error_rate', 'error_rate_with_dropped') then 100 * value else value end
    ) || coalesce(' ' || metric_unit_text(metric, unit), '');
