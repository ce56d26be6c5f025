"""A requirement's spec (`threshold`) and current expectation (`expect`) judged side by side, and slow calls
counted at the requirement's own threshold, on the fixture run of test_verdicts (answers from its PLAN)."""

from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.unit.warehouse.marts.test_verdicts import PLAN, START, _log

REQUIREMENTS = [
    {"id": "api1-avg", "metric": "avg_ms", "op": "<", "threshold": 500, "expect": 50, "side": "server",
     "label": "/api/1", "slow_call_ms": 100},
    {"id": "dropped", "metric": "error_rate_with_dropped", "op": "<", "threshold": 0.05, "expect": 0.02, "side": "server"},
    {"id": "campaign-slow", "metric": "avg_ms", "op": "<", "threshold": 1000, "side": "server"},
]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("two-thresholds")
    iterations = [{"index": i, "start": (START + timedelta(seconds=20 * (i - 1))).isoformat(),
                   "end": (START + timedelta(seconds=20 * (i - 1) + 10)).isoformat(), "load": {"vus": 10 * i}}
                  for i in PLAN]
    source = {"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
    root = write_bundle(tmp_path / "b", {"access.log": _log()}, [source], iterations, REQUIREMENTS,
                        thresholds={"slow_call_ms": 300})
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda m: None)
    return tmp_path / "w.duckdb"


def _rows(path, requirement_id):
    with duckdb.connect(str(path), read_only=True) as con:
        cursor = con.execute(
            "select iteration, passed, expect, expect_passed, expect_margin_pct, slow_calls, slow_call_ms "
            "from verdicts where requirement_id = $id order by iteration nulls last", {"id": requirement_id})
        return [dict(zip([d[0] for d in cursor.description], row)) for row in cursor.fetchall()]


def _api1_calls(iteration: int) -> int:
    return sum(n % 3 == 1 for n in range(PLAN[iteration][0]))


def test_the_expectation_is_judged_beside_the_spec(warehouse):
    rows = _rows(warehouse, "api1-avg")
    # avg 10, 100, 300 ms against the spec < 500 (always holds) and the expectation < 50 (met at iteration 1 only)
    assert [r["passed"] for r in rows] == [True, True, True, True]
    assert [r["expect_passed"] for r in rows] == [True, False, False, False]
    assert [r["expect"] for r in rows] == [50] * 4
    margins = [100 * (50 - PLAN[i][1]) / 50 for i in PLAN]
    assert [r["expect_margin_pct"] for r in rows] == pytest.approx([*margins, min(margins)])
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (sentence,) = con.execute("select sentence from conclusions where subject = 'api1-avg'").fetchone()
    assert sentence == (
        f"api1-avg: server (label /api/1) avg 300.0 ms at {_api1_calls(3) / 10:.1f} calls/s (iteration 3), limit < "
        f"500 ms: holds at every judged iteration (1, 2, 3), smallest margin 40 %; holds up to iteration 3, "
        f"{_api1_calls(3) / 10:.1f} calls/s; expectation < 50 ms missed at iterations 2, 3.")


def test_slow_calls_at_the_requirement_threshold_else_the_campaign(warehouse):
    slow_at_100 = [_api1_calls(i) if PLAN[i][1] >= 100 else 0 for i in PLAN]
    assert [(r["slow_calls"], r["slow_call_ms"]) for r in _rows(warehouse, "api1-avg")] == [
        (n, 100) for n in [*slow_at_100, sum(slow_at_100)]]
    # no slow_call_ms of its own: the campaign's 300 ms; a call of exactly 300 ms is slow (at or over)
    slow_at_300 = [PLAN[i][0] if PLAN[i][1] >= 300 else 0 for i in PLAN]
    assert slow_at_300 == [0, 0, 600]
    assert [(r["slow_calls"], r["slow_call_ms"]) for r in _rows(warehouse, "campaign-slow")] == [
        (n, 300) for n in [*slow_at_300, sum(slow_at_300)]]


def test_a_rate_reads_in_percent_in_the_sentence(warehouse):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (sentence,) = con.execute("select sentence from conclusions where subject = 'dropped'").fetchone()
    # 1 error in 100 calls (n % 100 == 0), no dropped calls: 1 % against 5 % (margin 80 %) and 2 %
    assert sentence == (
        "dropped: server error rate with dropped calls 1.00 % at 20.0 calls/s (iteration 1), limit < 5 %: holds "
        "at every judged iteration (1, 2, 3), smallest margin 80 %; holds up to iteration 3, 60.0 calls/s; "
        "expectation < 2 % met at every judged iteration.")


@pytest.mark.parametrize(("op", "threshold", "expect"), [("<", 500, 600), (">=", 30, 20)])
def test_an_expectation_looser_than_the_spec_is_refused(op, threshold, expect):
    from pydantic import ValidationError

    from tasks.bundle.manifest import Requirement

    with pytest.raises(ValidationError, match=f"expect {expect} is looser than the threshold {op} {threshold}"):
        Requirement(id="x", metric="avg_ms", op=op, threshold=threshold, expect=expect, side="server")
