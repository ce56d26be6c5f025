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

-- The nearest-rank percentile from the same rows: the smallest value whose running count reaches rank ceil(n q),
-- n = last_rank + 1 (at least rank 1). The rank is computed as numpy's inverted_cdf computes it, n q in double
-- precision: at q = 0.07, n = 100 that is 7.000000000000001 and rank 8, where the exact 7 q n would give 7.
create or replace temp macro nearest_rank_from_counts(x, running_count, last_rank, q) as
    min(x) filter (where running_count >= greatest(ceil((last_rank + 1)::double * q), 1));

-- A run's percentile from counts by its method (macro percentile_method): nearest_rank, else linear.
create or replace temp macro quantile_from_counts_by(method, x, running_count, last_rank, q) as
    case when method = 'nearest_rank' then nearest_rank_from_counts(x, running_count, last_rank, q)
        else quantile_from_counts(x, running_count, last_rank, q) end;
