-- How a run's percentiles are taken (run.yaml `percentile_method`, docs/bundle-format.md): 'linear' (numpy's
-- default, quantile_cont) or 'nearest_rank' (the value at rank ceil(q n): numpy's inverted_cdf, quantile_disc).
-- A manifest stores the key only when it is not the default (tasks/warehouse/ingest.py), so a run ingested
-- before the key existed reads 'linear', as it was computed.
-- upstream: none
create or replace temp macro percentile_method(manifest) as coalesce(manifest ->> 'percentile_method', 'linear');

-- Exact percentiles of the values of a group by sorting them, as the method says; q a number or a list. Only the
-- method's aggregate receives values (the other's filter lets none through), so a group is held and sorted once.
-- quantile_disc agrees with numpy's inverted_cdf at q 0.5, 0.9, 0.95 and 0.99, the only ones the marts take
-- (tests/unit/warehouse/test_percentile_methods.py); at some other q (0.07, 0.14, ...) DuckDB's rank is the exact
-- ceil(q n) and numpy's is taken in floating point, one rank higher.
create or replace temp macro quantile_by(method, x, q) as
    coalesce(
        quantile_disc(x, q) filter (where method = 'nearest_rank'),
        quantile_cont(x, q) filter (where method is distinct from 'nearest_rank')
    );
