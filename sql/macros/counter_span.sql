-- How much a counter (bytes since the container started, GC count) grew over a group of samples: its
-- last value minus its first, in line order, over the samples that have it. An aggregate: use it in a
-- grouped select.
-- upstream: none
create or replace temp macro counter_span(value, line_no) as
    arg_max(value, line_no) filter (where value is not null)
    - arg_min(value, line_no) filter (where value is not null);
