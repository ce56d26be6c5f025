"""Comparison of two runs: B 20 % slower on 5,000 samples is beyond noise, a second draw of A's distribution is not.

Expected values are computed here from the generated samples with numpy and scipy, not by the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tasks.report.compare import bootstrap_quantile, compare_runs, requirement_changes
from tasks.warehouse.connection import open_warehouse
from tests.unit.report.runs import cmp_samples

CLI = str(Path(sys.executable).parent / "perfcampaign")


def _compare(warehouse, a: str, b: str, **options):
    with open_warehouse(warehouse) as con:
        changes = compare_runs(con, a, b, **options)
        return changes, requirement_changes(con, a, b, changes)


def _row(changes, metric: str, label: str = "(all)"):
    (row,) = [c for c in changes if c.metric == metric and c.label == label and c.side == "server"]
    return row


def _naive_bootstrap_ci(a: np.ndarray, b: np.ndarray, q: float, alpha: float = 0.01, draws: int = 2000):
    rng = np.random.default_rng(7)
    diff = [np.percentile(rng.choice(b, len(b)), 100 * q) - np.percentile(rng.choice(a, len(a)), 100 * q)
            for _ in range(draws)]
    return np.quantile(diff, [alpha / 2, 1 - alpha / 2])


def test_twenty_percent_slower_is_beyond_noise(report_warehouse):
    a, b = cmp_samples("cmp-a"), cmp_samples("cmp-b")
    changes, requirements = _compare(report_warehouse, "cmp-a", "cmp-b")
    avg = _row(changes, "avg_ms")
    assert (avg.a, avg.b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))
    assert avg.change_pct == pytest.approx(100 * (b.mean() / a.mean() - 1))
    welch = stats.ttest_ind(b, a, equal_var=False)
    low, high = welch.confidence_interval(0.99)
    assert avg.test == "welch t" and avg.p_value == pytest.approx(welch.pvalue, rel=1e-6, abs=1e-300)
    assert (avg.ci_low, avg.ci_high) == (pytest.approx(low), pytest.approx(high)) and low > 0
    assert avg.p_value < 1e-50 and avg.beyond_noise and avg.direction == "worse"
    p95 = _row(changes, "p95_ms")
    assert (p95.a, p95.b) == (pytest.approx(np.percentile(a, 95)), pytest.approx(np.percentile(b, 95)))
    low, high = _naive_bootstrap_ci(a, b, 0.95)
    assert low > 0 and p95.ci_low > 0 and p95.beyond_noise and p95.direction == "worse"
    assert p95.ci_low == pytest.approx(low, rel=0.25) and p95.ci_high == pytest.approx(high, rel=0.25)
    # per label: /a and /b alternate, so each holds every other sample
    label_a = _row(changes, "p50_ms", "/a")
    assert label_a.b == pytest.approx(np.percentile(b[0::2], 50))
    low, high = _naive_bootstrap_ci(a[0::2], b[0::2], 0.5)
    assert label_a.test == "bootstrap" and low > 0 and label_a.ci_low > 0 and label_a.direction == "worse"
    assert label_a.ci_low == pytest.approx(low, rel=0.25) and label_a.ci_high == pytest.approx(high, rel=0.25)
    (check,) = requirements
    assert (check.test, check.unit, check.requirement) == ("p95-under-1000 @ iteration 1 (vus=50)", "ms",
                                                           "server p95_ms < 1000")
    assert (check.before, check.after) == (pytest.approx(np.percentile(a, 95)), pytest.approx(np.percentile(b, 95)))
    assert check.verdict == "WORSE"


def test_same_distribution_is_within_noise(report_warehouse):
    a, same = cmp_samples("cmp-a"), cmp_samples("cmp-same")
    expected_p = stats.ttest_ind(same, a, equal_var=False).pvalue
    assert expected_p > 0.05  # the fixture's premise, checked independently
    changes, requirements = _compare(report_warehouse, "cmp-a", "cmp-same")
    avg = _row(changes, "avg_ms")
    assert avg.p_value == pytest.approx(expected_p) and not avg.beyond_noise and avg.direction == "same"
    low, high = _naive_bootstrap_ci(a, same, 0.95)
    assert low < 0 < high
    p95 = _row(changes, "p95_ms")
    assert p95.ci_low < 0 < p95.ci_high and p95.direction == "same"
    calls = _row(changes, "calls_per_s")
    assert calls.change_pct == pytest.approx(0.0) and calls.direction == "same"
    assert [c.verdict for c in requirements] == ["same"]


def test_iterations_are_matched_by_index_and_loads_shown(report_warehouse):
    changes, requirements = _compare(report_warehouse, "pass-1", "broken-1", max_labels=0)
    first = [c for c in changes if c.iteration == 1 and c.metric == "avg_ms" and c.side == "server"][0]
    assert (first.load_a, first.load_b, first.direction) == ("vus=10", "vus=10", "same")
    mismatch = [c for c in changes if c.iteration == 3 and c.metric == "avg_ms" and c.side == "server"][0]
    assert (mismatch.load_a, mismatch.load_b) == ("vus=40", "vus=30")
    only_b = [c for c in changes if c.iteration == 4 and c.metric == "avg_ms" and c.side == "server"][0]
    assert only_b.a is None and only_b.direction == "n/a"
    verdicts = {(c.requirement_id, c.iteration): c.verdict for c in requirements}
    assert verdicts[("avg-under-250", 2)] == "WORSE"  # 10 ms -> 100 ms, still under 250
    assert verdicts[("avg-under-250", 3)] == "FAIL"
    assert verdicts[("avg-under-250", 4)] == "FAIL"
    assert verdicts[("busy-only", 1)] == "not judged"
    # 12 ms -> 10 ms on every call, but 100 calls say nothing about a p95 (200 needed: 10 beyond it)
    assert verdicts[("p95-under-500", 1)] == "untested"
    p95 = [c for c in changes if c.iteration == 1 and c.metric == "p95_ms" and c.side == "server"][0]
    assert (p95.test, p95.direction) == ("too few samples", "n/a")
    assert verdicts[("p95-under-500", 4)] == "no baseline"
    # the expectation is judged on B whatever the baseline: 400 ms against < 200 ms
    expectations = {(c.requirement_id, c.iteration): (c.expectation, c.expect_met) for c in requirements}
    assert expectations[("p95-under-500", 4)] == ("< 200 ms: MISSED", False)
    assert expectations[("p95-under-500", 2)] == ("< 200 ms: met", True)
    assert expectations[("avg-under-250", 2)] == ("no higher than before beyond noise", None)
    assert {c.label for c in changes} == {"(all)"}


@pytest.mark.parametrize("method, numpy_method", [("linear", "linear"), ("nearest_rank", "inverted_cdf")])
def test_the_exact_bootstrap_matches_resampling(method, numpy_method):
    rng = np.random.default_rng(3)
    values = rng.lognormal(3, 0.4, 400)
    replicates = bootstrap_quantile(values, 0.95, 5000, rng, method)
    naive = [np.quantile(rng.choice(values, 400), 0.95, method=numpy_method) for _ in range(5000)]
    assert replicates.mean() == pytest.approx(np.mean(naive), rel=0.01)
    assert replicates.std() == pytest.approx(np.std(naive), rel=0.08)
    if method == "nearest_rank":  # a nearest rank is always one of the samples
        assert np.isin(replicates, values).all()


def test_each_run_is_compared_by_its_own_percentile_method(tmp_path):
    """A interpolates, B takes the nearest rank: each side's figures, per label too, are numpy's of its method."""
    from tasks.warehouse.models import model_sql

    rng = np.random.default_rng(22)
    a, b = rng.integers(1, 5000, 3000), rng.integers(1, 5000, 3000)  # nearly distinct: the sorting path
    warehouse = _two_runs(tmp_path, list(a), list(b), methods=("linear", "nearest_rank"), labels=("/x", "/y"))
    changes, _ = _compare(warehouse, "A", "B")
    for label, a_values, b_values in (("(all)", a, b), ("/y", a[1::2], b[1::2])):
        for metric, q in (("p50_ms", 0.5), ("p90_ms", 0.9), ("p95_ms", 0.95), ("p99_ms", 0.99)):
            row = _row(changes, metric, label)
            assert row.a == pytest.approx(np.quantile(a_values, q)), (label, metric)
            assert row.b == np.quantile(b_values, q, method="inverted_cdf"), (label, metric)
    with open_warehouse(warehouse) as con:
        p95 = con.execute(model_sql("reports/report_label_stats"), {"run_id": "B", "max_labels": 10}).fetchall()
    assert [row[-1] for row in p95] == [np.quantile(b[0::2], 0.95, method="inverted_cdf"),
                                        np.quantile(b[1::2], 0.95, method="inverted_cdf")]


def test_compare_command_json(report_file):
    result = subprocess.run([CLI, "compare", "cmp-a", "cmp-b", "-w", str(report_file), "-f", "json",
                             "--max-labels", "0"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["requirements"][0]["verdict"] == "WORSE"
    assert {row["metric"] for row in data["metrics"]} >= {"avg_ms", "p95_ms", "calls_per_s", "error_rate"}
    missing = subprocess.run([CLI, "compare", "cmp-a", "nope", "-w", str(report_file)], capture_output=True,
                             text=True, timeout=120)
    assert missing.returncode == 1 and "no run 'nope'" in missing.stderr


def _two_runs(tmp_path, elapsed_a, elapsed_b, requirements_a=(), requirements_b=(), errors_b=0, vus=(10, 10),
              methods=("linear", "linear"), labels=("/x",)):
    """Runs A and B of one 60 s iteration, one request a line at 10 ms apart, times from the lists; their
    percentile_method; the labels taken in turn."""
    from tasks.warehouse.ingest import ingest_bundle
    from tests.bundles import write_bundle

    warehouse = tmp_path / "w.duckdb"
    for run_id, elapsed, requirements, errors, users, method in (
            ("A", elapsed_a, requirements_a, 0, vus[0], methods[0]), ("B", elapsed_b, requirements_b, errors_b, vus[1],
                                                                     methods[1])):
        lines = [f'10.0.0.1 - - [01/Jan/2026:10:00:{n // 100:02d} +0000] "GET {labels[n % len(labels)]} HTTP/1.1" '
                 f'{500 if n < errors else 200} 5 {ms}' for n, ms in enumerate(elapsed)]
        source = {"kind": "access_log", "host": "app", "path": "a.log", "preset": "tomcat_common_d",
                  "duration_unit": "ms"}
        iteration = {"index": 1, "start": "2026-01-01T10:00:00Z", "end": "2026-01-01T10:01:00Z", "load": {"vus": users}}
        root = write_bundle(tmp_path / run_id, {"a.log": "\n".join(lines) + "\n"}, [source], [iteration],
                            list(requirements), run_id=run_id, percentile_method=method)
        ingest_bundle(root, warehouse, progress=lambda m: None)
    return warehouse


def test_a_higher_mean_with_a_lower_median_is_worse_on_avg_and_better_on_p50(tmp_path):
    # B: most calls faster (40 vs 50 ms), a slow tenth (400 ms): the mean rises, the median falls
    a = [50 + n % 3 for n in range(3000)]
    b = [400 if n % 10 == 0 else 40 + n % 3 for n in range(3000)]
    changes, _ = _compare(_two_runs(tmp_path, a, b), "A", "B")
    assert np.mean(b) > np.mean(a) and np.median(b) < np.median(a)
    avg, p50 = _row(changes, "avg_ms"), _row(changes, "p50_ms")
    assert (avg.direction, avg.ci_low > 0) == ("worse", True)
    assert (p50.direction, p50.ci_high < 0) == ("better", True)


def test_three_samples_test_nothing(tmp_path):
    changes, _ = _compare(_two_runs(tmp_path, [10, 11, 12], [90, 91, 92]), "A", "B")
    for metric in ("avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms"):
        row = _row(changes, metric)
        assert (row.test, row.p_value, row.direction) == ("too few samples", None, "n/a"), metric


def test_a_requirement_is_compared_with_the_same_metric_and_error_rates_in_percent(tmp_path):
    p95 = {"id": "fast", "metric": "p95_ms", "op": "<", "threshold": 500, "side": "server"}
    errors = {"id": "errors", "metric": "error_rate", "op": "<", "threshold": 0.05, "side": "server"}
    a = [10 + n % 100 for n in range(3000)]
    b = [20 + n % 100 for n in range(3000)]
    warehouse = _two_runs(tmp_path, a, b, [p95, errors], [{**p95, "metric": "p99_ms"}, errors], errors_b=60,
                          vus=(10, 20))
    _, requirements = _compare(warehouse, "A", "B")
    fast = [r for r in requirements if r.requirement_id == "fast"][0]
    # "fast" means p99 in B: compared with A's p99, not with A's p95 of the same id
    assert (fast.before, fast.after) == (pytest.approx(np.percentile(a, 99)), pytest.approx(np.percentile(b, 99)))
    assert fast.test == "fast @ iteration 1 (vus=20; before: vus=10)"
    rate = [r for r in requirements if r.requirement_id == "errors"][0]
    assert (rate.unit, rate.before, rate.after) == ("%", 0.0, pytest.approx(100 * 60 / 3000))


def test_compare_command_table_and_bad_options(tmp_path):
    warehouse = _two_runs(tmp_path, [10 + n % 7 for n in range(3000)], [30 + n % 7 for n in range(3000)], vus=(10, 20))
    table = subprocess.run([CLI, "compare", "A", "B", "-w", str(warehouse), "--only", "metrics"],
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0, table.stderr
    avg = [line for line in table.stdout.splitlines() if " avg_ms " in line][0]
    assert "vus=10 -> vus=20" in avg and "< 0.001" in avg and "worse" in avg
    for options, message in ((["--alpha", "5"], "between 0 and 1"), (["--only", "bogus"], "requirements, metrics or hosts"),
                             (["-f", "xml"], "expected one of table, csv, json")):
        bad = subprocess.run([CLI, "compare", "A", "B", "-w", str(warehouse), *options], capture_output=True,
                             text=True, timeout=120)
        assert bad.returncode == 2 and message in " ".join(bad.stderr.split()) and "Traceback" not in bad.stderr
