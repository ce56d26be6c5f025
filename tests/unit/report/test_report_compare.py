"""Comparison of two runs: B 20 % slower on 5,000 samples is beyond noise, a second draw of A's distribution is not.

Expected values are computed here from the generated samples with numpy and scipy, not by the code under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest
from scipy import stats

from tasks.compare import bootstrap_quantile, compare_runs, requirement_changes
from tests.unit.report.runs import cmp_samples

CLI = str(Path(sys.executable).parent / "perfcampaign")


def _compare(warehouse, a: str, b: str, **options):
    with duckdb.connect(str(warehouse), read_only=True) as con:
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
    assert avg.test == "mann-whitney"
    assert avg.p_value == pytest.approx(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    assert avg.p_value < 1e-50 and avg.beyond_noise and avg.direction == "worse"
    p95 = _row(changes, "p95_ms")
    assert (p95.a, p95.b) == (pytest.approx(np.percentile(a, 95)), pytest.approx(np.percentile(b, 95)))
    low, high = _naive_bootstrap_ci(a, b, 0.95)
    assert low > 0 and p95.ci_low > 0 and p95.beyond_noise and p95.direction == "worse"
    assert p95.ci_low == pytest.approx(low, rel=0.25) and p95.ci_high == pytest.approx(high, rel=0.25)
    # per label: /a and /b alternate, so each holds every other sample
    label_a = _row(changes, "p50_ms", "/a")
    assert label_a.b == pytest.approx(np.percentile(b[0::2], 50))
    assert label_a.p_value == pytest.approx(stats.mannwhitneyu(a[0::2], b[0::2], alternative="two-sided").pvalue)
    (check,) = requirements
    assert (check.test, check.unit, check.requirement) == ("p95-under-1000 @ iteration 1 (vus=50)", "ms",
                                                           "server p95_ms < 1000")
    assert (check.before, check.after) == (pytest.approx(np.percentile(a, 95)), pytest.approx(np.percentile(b, 95)))
    assert check.verdict == "WORSE"


def test_same_distribution_is_within_noise(report_warehouse):
    a, same = cmp_samples("cmp-a"), cmp_samples("cmp-same")
    expected_p = stats.mannwhitneyu(a, same, alternative="two-sided").pvalue
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
    assert verdicts[("p95-under-500", 1)] == "better"  # 12 ms -> 10 ms on every call
    assert verdicts[("p95-under-500", 4)] == "no baseline"
    assert {c.label for c in changes} == {"(all)"}


def test_the_exact_bootstrap_matches_resampling():
    rng = np.random.default_rng(3)
    values = rng.lognormal(3, 0.4, 400)
    replicates = bootstrap_quantile(values, 0.95, 5000, rng)
    naive = [np.percentile(rng.choice(values, 400), 95) for _ in range(5000)]
    assert replicates.mean() == pytest.approx(np.mean(naive), rel=0.01)
    assert replicates.std() == pytest.approx(np.std(naive), rel=0.08)


def test_compare_command_json(report_warehouse):
    result = subprocess.run([CLI, "compare", "cmp-a", "cmp-b", "-w", str(report_warehouse), "-f", "json",
                             "--max-labels", "0"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["requirements"][0]["verdict"] == "WORSE"
    assert {row["metric"] for row in data["metrics"]} >= {"avg_ms", "p95_ms", "calls_per_s", "error_rate"}
    missing = subprocess.run([CLI, "compare", "cmp-a", "nope", "-w", str(report_warehouse)], capture_output=True,
                             text=True, timeout=120)
    assert missing.returncode == 1 and "no run 'nope'" in missing.stderr
