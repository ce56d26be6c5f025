"""The percentile macros against numpy: `linear` is numpy's default, `nearest_rank` its inverted_cdf (the value at
rank ceil(q n), n q taken in floating point), by sorting (quantile_by) and from counts (quantile_from_counts_by),
over many group sizes, including floating-point edges such as 0.95 * 100 and 0.07 * 100."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from tasks.warehouse.models import model_sql

MART_QUANTILES = [0.5, 0.9, 0.95, 0.99]  # the only ones the marts and reports take
# every whole percent and a few more: 0.07 * 100 is 7.000000000000001 in floating point, 0.95 * 100 is 95.0
ANY_QUANTILES = [round(i / 100, 2) for i in range(1, 100)] + [0.001, 0.995, 0.999]
SIZES = [*range(1, 401), 999, 1000, 1001, 1999, 2000, 4096, 10_007]


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    for macros in ("macros/quantile_from_counts", "macros/percentile_method"):
        connection.execute(model_sql(macros))
    rng = np.random.default_rng(22)
    # group n holds n values: distinct ones (v) and repeating ones (r, at most 12 distinct values)
    n = np.repeat(SIZES, SIZES)
    frame = pd.DataFrame({"n": n, "v": rng.permutation(len(n)).astype(float),
                          "r": rng.integers(0, 12, len(n)).astype(float)})
    connection.register("frame", frame)
    connection.execute("create table samples as select * from frame")
    yield connection
    connection.close()


@pytest.mark.parametrize("method, numpy_method", [("linear", "linear"), ("nearest_rank", "inverted_cdf")])
def test_sorting_takes_numpys_percentiles_at_the_marts_quantiles(con, method, numpy_method):
    got = dict(con.execute("select n, quantile_by($method, v, $qs::double[]) from samples group by n",
                           {"method": method, "qs": MART_QUANTILES}).fetchall())
    values = con.execute("select n, list(v) from samples group by n").fetchall()
    for n, group in values:
        expected = np.quantile(np.array(group), MART_QUANTILES, method=numpy_method)
        assert got[n] == pytest.approx(list(expected), rel=1e-12), n


@pytest.mark.parametrize("method, numpy_method", [("linear", "linear"), ("nearest_rank", "inverted_cdf")])
@pytest.mark.parametrize("column", ["v", "r"], ids=["distinct", "repeating"])
def test_counts_take_numpys_percentiles_at_any_quantile(con, method, numpy_method, column):
    got = {(n, q): value for n, q, value in con.execute(f"""
        with counted as (select n, {column} as x, count(*) as calls from samples group by all),
        ranked as (
            select *,
                sum(calls) over (partition by n order by x rows between unbounded preceding and current row)
                    as running_calls,
                sum(calls) over (partition by n) - 1 as last_rank
            from counted
        )
        select n, q, quantile_from_counts_by($method, x, running_calls, last_rank, q)
        from ranked, unnest($qs::double[]) as quantiles(q)
        group by n, q
        """, {"method": method, "qs": ANY_QUANTILES}).fetchall()}
    for n, group in con.execute(f"select n, list({column}) from samples group by n").fetchall():
        expected = np.quantile(np.array(group), ANY_QUANTILES, method=numpy_method)
        assert [got[n, q] for q in ANY_QUANTILES] == pytest.approx(list(expected), rel=1e-12), n


def test_quantile_disc_is_the_exact_rank_where_numpy_rounds_n_q_up():
    """Why the marts take only 0.5, 0.9, 0.95 and 0.99 by quantile_disc: at q = 0.07 and n = 100 DuckDB takes
    rank 7 (the exact ceil(q n)) and numpy (and Lysiro) rank 8, from 0.07 * 100 = 7.000000000000001."""
    assert 0.07 * 100 > 7 and 0.95 * 100 == 95
    disc = duckdb.sql("select quantile_disc(x, 0.07::double) from range(1, 101) t(x)").fetchone()[0]
    assert (disc, np.quantile(np.arange(1, 101), 0.07, method="inverted_cdf")) == (7, 8)
