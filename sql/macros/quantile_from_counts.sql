-- An exact percentile from the counts of distinct values instead of the values themselves, as quantile_cont
-- (and numpy's default) interpolate it: with n values sorted, p at q is x[floor(h)] + (h - floor(h)) *
-- (x[ceil(h)] - x[floor(h)]), h = (n - 1) q, where x[r] is the smallest value whose running count passes r.
-- quantile_cont holds every value of every group in memory and sorts it (100 M requests: 3.1 GB, 67 s); the
-- distinct values of a group are bounded by its range over its resolution, so a hash count comes first.
-- Use inside a grouped select over rows of (x, running_count, last_rank): running_count = the running sum of
-- the counts in x order (NULL x last), last_rank = the group's non-NULL count - 1.
-- upstream: none
create or replace temp macro quantile_from_counts(x, running_count, last_rank, q) as
    min(x) filter (where running_count > floor(last_rank * q))
    + (any_value(last_rank) * q - floor(any_value(last_rank) * q))
    * (min(x) filter (where running_count > ceil(last_rank * q)) - min(x) filter (where running_count > floor(last_rank * q)));
