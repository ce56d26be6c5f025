"""Compare two runs: per iteration, side, label and metric, A against B, and whether the change is beyond noise.

Iterations are matched by index (the loads are shown side by side, so a different load is visible). The
values and the % change come from the warehouse (`sql/reports/compare_stats.sql`); this module adds one
significance test per row, always on the raw samples, never on two averages:

- `avg_ms`: Welch's t-test of the means (two-sided), with the (1 - alpha) interval of B - A. Means of
  thousands of response times are near normal however skewed the times are; a rank test would answer
  another question (which run is faster more often) and could point the other way.
- `p50_ms`, `p90_ms`, `p95_ms`, `p99_ms`: a bootstrap interval of the percentile's difference B - A, each
  run's percentile taken by its own `percentile_method` (linear or nearest rank), as its figures are. The
  change is beyond noise when the (1 - alpha) interval excludes 0; the p-value is twice the share of
  bootstrap differences on the far side of 0 (at least 1 / DRAWS).
- Too few samples, no test ("too few samples"): a percentile q needs 10 / (1 - q) samples on each side
  (10 beyond it: 100 for p90, 1000 for p99), a mean 10.
- `error_rate`: Fisher's exact test on errors and successes.
- `calls_per_s`: the exact conditional test of two Poisson rates (B's share of all calls against B's share
  of the time, a binomial test). A closed-loop load is less variable than Poisson, so this errs on the side
  of "within noise".
- `max_ms` is one sample: no test.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import duckdb
import numpy as np

from tasks.settings import COMPARE_ALPHA as ALPHA
from tasks.settings import HIGHER_IS_BETTER
from tasks.warehouse.models import model_sql

DRAWS = 2000
SEED = 20261202
PERCENTILES = {"p50_ms": 0.50, "p90_ms": 0.90, "p95_ms": 0.95, "p99_ms": 0.99}
MIN_SAMPLES_BEYOND = 10  # samples beyond a percentile (or in all, for a mean) before a test is made
UNITS = {"calls_per_s": "calls/s", "error_rate": "%", "error_rate_with_dropped": "%"}
SCALE = {"error_rate": 100.0, "error_rate_with_dropped": 100.0}  # requirement rows are published in their unit: an error rate in %


@dataclass
class MetricChange:
    """One metric of one iteration, side and label in A and in B, and the test of the difference."""

    iteration: int
    load_a: str | None
    load_b: str | None
    side: str
    label: str
    metric: str
    a: float | None
    b: float | None
    change_pct: float | None
    test: str
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    beyond_noise: bool | None
    direction: str  # worse, better, same (within noise), or n/a


@dataclass
class RequirementChange:
    """A row of the table users publish: test, unit, requirement, expectation, before, after, change, verdict.

    `before` and `after` are in `unit` (an error rate in %, not the warehouse's fraction). `expectation` is the
    requirement's current expectation and whether the run met it ("< 200 ms: MISSED"), else the comparison's
    own ("no higher than before beyond noise"); `verdict` judges the spec, then the change against before."""

    test: str
    unit: str
    requirement: str
    expectation: str
    before: float | None
    after: float | None
    change_pct: float | None
    verdict: str
    requirement_id: str
    iteration: int
    side: str
    metric: str
    p_value: float | None
    expect_met: bool | None = None  # None: no expectation, or not judged


def bootstrap_quantile(values: np.ndarray, q: float, draws: int, rng: np.random.Generator,
                       method: str = "linear") -> np.ndarray:
    """`draws` bootstrap replicates of the `q` quantile of `values`, drawn exactly: numpy's linear-interpolated
    one, or with `method="nearest_rank"` the value at rank ceil(q n) (numpy's `inverted_cdf`).

    Resampling n values with replacement and taking the r-th smallest is the same as mapping the r-th
    smallest of n uniforms, U(r) ~ Beta(r, n - r + 1), through the empirical quantile function
    x[ceil(n u) - 1]; the next order statistic is U(r) + (1 - U(r)) Beta(1, n - r). So each replicate
    costs two random numbers instead of n (one for a nearest rank), and every sample is used however many
    there are.
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n == 1:
        return np.full(draws, x[0])
    if method == "nearest_rank":
        rank, frac = max(1, math.ceil(n * q)), 0.0  # n q in floating point, as numpy's inverted_cdf
    else:
        h = (n - 1) * q
        rank = int(math.floor(h)) + 1  # 1-based rank of the lower neighbour
        frac = h - (rank - 1)
    lower_u = rng.beta(rank, n - rank + 1, size=draws)
    lower = x[np.clip(np.ceil(n * lower_u).astype(int) - 1, 0, n - 1)]
    if rank >= n or frac == 0:
        return lower
    upper_u = lower_u + (1 - lower_u) * rng.beta(1, n - rank, size=draws)
    upper = x[np.clip(np.ceil(n * upper_u).astype(int) - 1, 0, n - 1)]
    return lower + frac * (upper - lower)


def _percentile_test(a: np.ndarray, b: np.ndarray, q: float, alpha: float, rng: np.random.Generator,
                     methods: tuple[str, str]):
    diff = bootstrap_quantile(b, q, DRAWS, rng, methods[1]) - bootstrap_quantile(a, q, DRAWS, rng, methods[0])
    low, high = np.quantile(diff, [alpha / 2, 1 - alpha / 2])
    # two-sided, and never below the resolution of DRAWS replicates
    p_value = min(1.0, max(1 / DRAWS, 2 * min(np.mean(diff <= 0), np.mean(diff >= 0))))
    return float(p_value), float(low), float(high), bool(low > 0 or high < 0)


def mean_test(a: np.ndarray, b: np.ndarray, alpha: float):
    """(p-value, low, high, beyond noise) of Welch's test of B's mean against A's (compare_hosts uses it too)."""
    from scipy import stats

    if np.ptp(a) == 0 and np.ptp(b) == 0:  # two constants (every call alike): no variance to test against
        difference = float(b[0] - a[0])
        return (1.0 if difference == 0 else 0.0), difference, difference, difference != 0
    with warnings.catch_warnings():  # one constant side ("nearly identical data") is fine for Welch's test
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.ttest_ind(b, a, equal_var=False)
        low, high = result.confidence_interval(1 - alpha)
    p_value = float(result.pvalue)
    return p_value, float(low), float(high), bool(p_value < alpha)


def _min_samples(metric: str) -> int:
    q = PERCENTILES.get(metric)
    return MIN_SAMPLES_BEYOND if q is None else math.ceil(MIN_SAMPLES_BEYOND / (1 - q))


def _test(row: dict, samples, alpha: float, rng: np.random.Generator, methods: tuple[str, str]):
    """(test name, p-value, ci_low, ci_high, beyond_noise) for one row; samples() fetches (A, B) once;
    `methods`: A's and B's percentile_method."""
    from scipy import stats

    metric = row["metric"]
    if row["a"] is None or row["b"] is None:
        return "none", None, None, None, None
    if metric == "avg_ms" or metric in PERCENTILES:
        a, b = samples()
        if min(len(a), len(b)) < _min_samples(metric):
            return "too few samples", None, None, None, None
        if metric == "avg_ms":
            return ("welch t", *mean_test(a, b, alpha))
        return ("bootstrap", *_percentile_test(a, b, PERCENTILES[metric], alpha, rng, methods))
    if metric == "error_rate":
        ea, eb, ca, cb = row["errors_a"], row["errors_b"], row["calls_a"], row["calls_b"]
        p_value = float(stats.fisher_exact([[ea, ca - ea], [eb, cb - eb]]).pvalue)
        return "fisher", p_value, None, None, p_value < alpha
    if metric == "calls_per_s" and row["duration_a_s"] and row["duration_b_s"]:
        share = row["duration_b_s"] / (row["duration_a_s"] + row["duration_b_s"])
        p_value = float(stats.binomtest(row["calls_b"], row["calls_a"] + row["calls_b"], share).pvalue)
        return "poisson rates", p_value, None, None, p_value < alpha
    return "none", None, None, None, None


def direction_of(metric: str, a: float | None, b: float | None, beyond_noise: bool | None,
                 ci_low: float | None = None, ci_high: float | None = None) -> str:
    """worse/better by the tested difference B - A: its interval when there is one, else B against A."""
    if beyond_noise is None or a is None or b is None:
        return "n/a"
    if not beyond_noise or a == b:
        return "same"
    higher = ci_low > 0 if ci_low is not None and ci_high is not None else b > a
    return "better" if higher == (metric in HIGHER_IS_BETTER) else "worse"


def _sample_fetcher(con: duckdb.DuckDBPyConnection, run_a: str, run_b: str):
    cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
    sql = model_sql("reports/compare_samples")

    def fetch(iteration: int, side: str, label: str):
        key = (iteration, side, label)
        if key not in cache:
            params = {"iteration": iteration, "side": side, "label": None if label == "(all)" else label}
            cache.clear()  # rows come grouped: keep one group's samples in memory at a time
            cache[key] = tuple(
                con.execute(sql, {**params, "run_id": run}).fetchnumpy()["elapsed_ms"].astype(float)
                for run in (run_a, run_b)
            )
        return cache[key]

    return fetch


def compare_runs(
    con: duckdb.DuckDBPyConnection, run_a: str, run_b: str, alpha: float = ALPHA, max_labels: int = 10
) -> list[MetricChange]:
    """Every metric of every matched iteration, side and label of A and B, with its significance test."""
    cursor = con.execute(model_sql("reports/compare_stats"), {"run_a": run_a, "run_b": run_b, "max_labels": max_labels})
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, values)) for values in cursor.fetchall()]
    fetch = _sample_fetcher(con, run_a, run_b)
    known = dict(con.execute(model_sql("reports/percentile_methods"), {"run_a": run_a, "run_b": run_b}).fetchall())
    methods = (known.get(run_a, "linear"), known.get(run_b, "linear"))
    rng = np.random.default_rng(SEED)
    changes = []
    for row in rows:
        samples = lambda row=row: fetch(row["iteration"], row["side"], row["label"])  # noqa: E731
        test, p_value, low, high, beyond = _test(row, samples, alpha, rng, methods)
        changes.append(MetricChange(
            row["iteration"], row["load_a"], row["load_b"], row["side"], row["label"], row["metric"], row["a"],
            row["b"], row["change_pct"], test, p_value, low, high, beyond,
            direction_of(row["metric"], row["a"], row["b"], beyond, low, high),
        ))
    return changes


def requirement_changes(
    con: duckdb.DuckDBPyConnection, run_a: str, run_b: str, changes: list[MetricChange]
) -> list[RequirementChange]:
    """B's requirements at every iteration against A, in the form users publish, judged with `changes`."""
    cursor = con.execute(model_sql("reports/compare_requirements"), {"run_a": run_a, "run_b": run_b})
    columns = [d[0] for d in cursor.description]
    tested = {(c.iteration, c.side, c.metric, c.label): c for c in changes}  # whole side: label '(all)'
    result = []
    for values in cursor.fetchall():
        row = dict(zip(columns, values))
        change = tested.get((row["iteration"], row["side"], row["metric"], row["tested_label"]))
        if not row["is_judged"]:
            verdict = "not judged"
        elif not row["passed"]:
            verdict = "FAIL"
        elif row["before"] is None:
            verdict = "no baseline"
        elif change is None or change.direction == "n/a":
            verdict = "untested"
        else:
            verdict = {"worse": "WORSE", "better": "better", "same": "same"}[change.direction]
        higher = row["metric"] in HIGHER_IS_BETTER
        scale = SCALE.get(row["metric"], 1.0)
        load = row["load"] if row["load"] == row["load_a"] or row["load_a"] is None else (
            f"{row['load']}; before: {row['load_a']}")
        result.append(RequirementChange(
            test=f"{row['requirement_id']} @ iteration {row['iteration']} ({load})",
            unit=_unit(row),
            requirement=row["rule"],
            expectation=_expectation(row, higher, scale),
            before=None if row["before"] is None else row["before"] * scale,
            after=None if row["after"] is None else row["after"] * scale,
            change_pct=row["change_pct"], verdict=verdict,
            requirement_id=row["requirement_id"], iteration=row["iteration"], side=row["side"],
            metric=row["metric"], p_value=change.p_value if change else None,
            expect_met=row["expect_passed"],
        ))
    return result


def _expectation(row: dict, higher: bool, scale: float) -> str:
    """The requirement's current expectation and whether it was met, else the comparison's own."""
    if row["expect"] is None:
        return ("no lower than before" if higher else "no higher than before") + " beyond noise"
    met = {True: ": met", False: ": MISSED", None: ""}[row["expect_passed"]]
    return " ".join(filter(None, [row["op"], f"{row['expect'] * scale:g}", _unit(row)])) + met


def _unit(row: dict) -> str:
    """A requirement's unit: a request metric's, or a k6 metric's own (`cm_handles.rate`: its `unit`, or none)."""
    if "." in row["metric"]:
        return row["unit"] or ""
    return UNITS.get(row["metric"], "ms")
