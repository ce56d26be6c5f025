"""Requirement verdicts on a fixture run with known answers: broken at iteration 3, not judged below min load."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import duckdb
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
# (calls, elapsed ms) per 10-second iteration
PLAN = {1: (200, 10), 2: (400, 100), 3: (600, 300)}


def _log() -> str:
    lines = []
    for iteration, (calls, elapsed) in PLAN.items():
        begin = START + timedelta(seconds=20 * (iteration - 1))
        for n in range(calls):
            at = begin + timedelta(seconds=10 * n / calls)
            status = 500 if n % 100 == 0 else 200
            lines.append(f'10.0.0.1 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] "GET /api/{n % 3} HTTP/1.1" {status} 12 {elapsed}')
    return "\n".join(lines) + "\n"


@pytest.fixture
def warehouse(tmp_path):
    iterations = [
        {
            "index": i,
            "start": (START + timedelta(seconds=20 * (i - 1))).isoformat(),
            "end": (START + timedelta(seconds=20 * (i - 1) + 10)).isoformat(),
            "load": {"vus": 10 * i},
        }
        for i in PLAN
    ]
    requirements = [
        {"id": "avg-under-250", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "min_calls_per_s": 15},
        {"id": "avg-under-50-busy", "metric": "avg_ms", "op": "<", "threshold": 50, "side": "server", "min_calls_per_s": 25},
        {"id": "p95-under-500", "metric": "p95_ms", "op": "<", "threshold": 500, "side": "server"},
        {"id": "throughput", "metric": "calls_per_s", "op": ">=", "threshold": 30, "side": "server"},
        {"id": "errors", "metric": "error_rate", "op": "<=", "threshold": 0.01, "side": "server"},
        {"id": "client-avg", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "client"},
        {"id": "no-errors", "metric": "error_rate", "op": "<=", "threshold": 0, "side": "server"},
        {"id": "api1-errors", "metric": "error_rate", "op": "<=", "threshold": 0, "side": "server", "label": "/api/1"},
        {"id": "api12-rate", "metric": "calls_per_s", "op": ">=", "threshold": 30, "side": "server", "label": "/api/[12]"},
        {"id": "api02-rate", "metric": "calls_per_s", "op": ">=", "threshold": 30, "side": "server",
         "label_regex": "/api/(0|2)", "host": "app", "role": "sut"},
        {"id": "other-host", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "host": "app2"},
    ]
    source = {"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
    root = write_bundle(tmp_path / "b", {"access.log": _log()}, [source], iterations, requirements)
    path = tmp_path / "w.duckdb"
    ingest_bundle(root, path, progress=lambda m: None)
    return path


def _verdicts(path):
    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.execute(
            "select requirement_id, iteration, measured, calls_per_s, is_judged, passed, margin_pct, "
            "holds_up_to_iteration, holds_up_to_calls_per_s from verdicts"
        ).fetchall()
    return {(r[0], r[1]): r[2:] for r in rows}


def test_requirement_broken_at_iteration_3(warehouse):
    v = _verdicts(warehouse)
    assert v[("avg-under-250", 1)][:4] == (10.0, 20.0, True, True)
    assert v[("avg-under-250", 2)][:4] == (100.0, 40.0, True, True)
    assert v[("avg-under-250", 3)][:4] == (300.0, 60.0, True, False)
    measured, _, judged, passed, margin, up_to, up_to_cps = v[("avg-under-250", None)]
    assert (measured, judged, passed) == (300.0, True, False)
    assert margin == pytest.approx(100 * (250 - 300) / 250)
    assert (up_to, up_to_cps) == (2, 40.0)


def test_iterations_below_min_calls_are_not_judged(warehouse):
    v = _verdicts(warehouse)
    assert v[("avg-under-50-busy", 1)][2:4] == (False, None)  # 20 calls/s < 25: not judged though 10 ms < 50
    assert v[("avg-under-50-busy", 2)][2:4] == (True, False)
    whole = v[("avg-under-50-busy", None)]
    assert whole[0] == 300.0 and whole[3] is False and whole[5] is None  # fails at its first judged iteration
    assert whole[4] == pytest.approx(100 * (50 - 300) / 50)


def test_holding_requirements_and_other_metrics(warehouse):
    v = _verdicts(warehouse)
    assert v[("p95-under-500", None)][3] is True
    assert v[("p95-under-500", None)][5:] == (3, 60.0)
    # throughput >= 30 calls/s fails at iteration 1 only: it never "holds up to" anything before it
    assert [v[("throughput", i)][3] for i in (1, 2, 3)] == [False, True, True]
    assert v[("throughput", None)][0] == 20.0 and v[("throughput", None)][5] is None
    # 1 error per 100 calls: exactly 0.01
    assert v[("errors", 3)][0] == pytest.approx(6 / 600)
    assert v[("errors", None)][3] is True


def test_a_side_without_data_is_not_judged(warehouse):
    v = _verdicts(warehouse)
    assert v[("client-avg", 1)][:4] == (None, None, False, None)
    assert v[("client-avg", None)][2:4] == (False, None)


def test_a_threshold_of_zero_has_no_margin_and_still_a_sentence(warehouse):
    v = _verdicts(warehouse)
    assert [v[("no-errors", i)][:4] for i in (1, 2, 3)] == [
        (pytest.approx(2 / 200), 20.0, True, False), (pytest.approx(4 / 400), 40.0, True, False),
        (pytest.approx(6 / 600), 60.0, True, False)]
    assert v[("no-errors", 1)][4] is None and v[("no-errors", None)][4] is None  # no relative margin to 0
    assert v[("avg-under-50-busy", 1)][4] is None  # not judged: no margin either
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (sentence,) = con.execute("select sentence from conclusions where subject = 'no-errors'").fetchone()
    assert sentence == ("no-errors: server error rate 1.00 % at 20.0 calls/s (iteration 1), limit <= 0 %: "
                        "does not hold at iterations 1, 2, 3; it never held.")


def _expected(iteration: int, labels: set[int]) -> tuple[float, float]:
    """calls/s and error rate of the requests of `labels` in an iteration, from the plan itself."""
    calls = [n for n in range(PLAN[iteration][0]) if n % 3 in labels]
    return len(calls) / 10, sum(n % 100 == 0 for n in calls) / len(calls)


def test_a_scoped_requirement_is_judged_on_its_labels_and_host_only(warehouse):
    v = _verdicts(warehouse)
    for i in PLAN:
        assert v[("api1-errors", i)][:2] == (pytest.approx(_expected(i, {1})[1]), pytest.approx(_expected(i, {1})[0]))
        assert v[("api12-rate", i)][0] == pytest.approx(_expected(i, {1, 2})[0])
        assert v[("api02-rate", i)][0] == pytest.approx(_expected(i, {0, 2})[0])
    # /api/1 got the errors of n = 100 and 400 only: iteration 3 (n < 600) has both, iteration 1 one
    assert [v[("api1-errors", i)][3] for i in PLAN] == [False, False, False]
    assert v[("other-host", None)][2:4] == (False, None)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = dict(con.execute("select requirement_id, rule from verdicts where iteration is null").fetchall())
        (sentence,) = con.execute("select sentence from conclusions where subject = 'other-host'").fetchone()
    assert rows["api12-rate"] == "server calls_per_s >= 30 (label /api/[12])"
    assert rows["api02-rate"] == "server calls_per_s >= 30 (label ~ /api/(0|2) host app role sut)"
    assert rows["avg-under-250"] == "server avg_ms < 250"
    assert sentence == "other-host: not judged: no server-side requests in its scope (host app2)."


def test_a_requirement_at_a_load_is_judged_there_only_and_says_by_which_rule(tmp_path):
    iterations = [
        {"index": i, "start": (START + timedelta(seconds=20 * (i - 1))).isoformat(),
         "end": (START + timedelta(seconds=20 * (i - 1) + 10)).isoformat(), "load": {"vus": 10 * i, "size": "1kb"}}
        for i in PLAN
    ]
    requirements = [
        {"id": "avg-at-20-vus", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "at_load": {"vus": 20}},
        {"id": "avg-at-3", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "at": {"iteration": 3},
         "min_calls_per_s": 15},
        {"id": "avg-at-99-vus", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "at_load": {"vus": 99}},
        {"id": "avg-busy", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "min_calls_per_s": 30},
        {"id": "avg", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server"},
    ]
    source = {"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
    root = write_bundle(tmp_path / "b", {"access.log": _log()}, [source], iterations, requirements)
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda m: None)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        rows = {(r, i): (judged, passed, by) for r, i, judged, passed, by in con.execute(
            "select requirement_id, iteration, is_judged, passed, judged_by from verdicts").fetchall()}
        (sentence,) = con.execute("select sentence from conclusions where subject = 'avg-at-99-vus'").fetchone()
    assert [rows[("avg-at-20-vus", i)] for i in (1, 2, 3, None)] == [
        (False, None, "load is not vus=20"), (True, True, "at load vus=20"), (False, None, "load is not vus=20"),
        (True, True, "at load vus=20")]
    # iteration 3 alone, and only once it reached 15 calls/s (it ran at 60): avg 300 ms > 250 there
    assert [rows[("avg-at-3", i)] for i in (1, 3, None)] == [
        (False, None, "not iteration 3"), (True, False, "at iteration 3 and min_calls_per_s 15"),
        (True, False, "at iteration 3 and min_calls_per_s 15")]
    assert rows[("avg-busy", 1)] == (False, None, "under min_calls_per_s 30")
    assert rows[("avg", 1)] == (True, True, "every iteration")
    assert rows[("avg-at-99-vus", None)][:2] == (False, None)
    assert sentence == "avg-at-99-vus: not judged: no iteration with data met its rule (at load vus=99)."


def test_a_requirement_at_an_unknown_iteration_is_refused(tmp_path):
    from tasks.bundle.manifest import ManifestError, load_manifest

    requirement = {"id": "x", "metric": "avg_ms", "op": "<", "threshold": 1, "side": "server", "at": {"iteration": 7}}
    iterations = [{"index": 1, "start": START.isoformat(), "end": (START + timedelta(seconds=10)).isoformat()}]
    source = {"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d"}
    root = write_bundle(tmp_path / "b", {"access.log": _log()}, [source], iterations, [requirement])
    with pytest.raises(ManifestError, match="requirements.0.at.iteration: 7 is not an iteration index"):
        load_manifest(root)


@pytest.mark.parametrize("method, numpy_method", [("linear", "linear"), ("nearest_rank", "inverted_cdf")])
@pytest.mark.parametrize("hosts", [("a", "b"), ("a",)], ids=["side-sorted", "side-counted"])
def test_percentile_requirements_match_numpy_whether_durations_repeat_or_not(tmp_path, hosts, method, numpy_method):
    """int_requirement_stats' three paths, each exactly as numpy takes the run's percentile_method (linear: its
    default; nearest_rank: its inverted_cdf). With hosts a and b the server side's durations are nearly all
    distinct, so its requests are read as rows: host a's requirement, whose durations repeat, is judged from counts
    of its distinct durations, host b's by sorting them. With host a alone the side is counted once for every model
    (int_request_counts) and the requirement reads those counts."""
    import numpy as np

    durations = {"a": [1 + (n * 7919) % 40 for n in range(2000)], "b": [(n * 7919) % 100_003 for n in range(2000)]}
    durations = {host: durations[host] for host in hosts}
    logs = {
        f"{host}.log": "".join(f'10.0.0.1 - - [{START + timedelta(seconds=n % 10):%d/%b/%Y:%H:%M:%S} +0000] '
                               f'"GET /x HTTP/1.1" 200 1 {ms}\n' for n, ms in enumerate(values))
        for host, values in durations.items()
    }
    sources = [{"kind": "access_log", "host": h, "path": f"{h}.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
               for h in durations]
    iterations = [{"index": 1, "start": START.isoformat(), "end": (START + timedelta(seconds=10)).isoformat()}]
    requirements = [{"id": f"{h}-{m}", "metric": f"{m}_ms", "op": "<", "threshold": 1e9, "side": "server", "host": h}
                    for h in durations for m in ("p50", "p95", "p99")]
    root = write_bundle(tmp_path / "b", logs, sources, iterations, requirements, percentile_method=method)
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda m: None)
    measured = {key[0]: row[0] for key, row in _verdicts(tmp_path / "w.duckdb").items() if key[1] == 1}
    for host, values in durations.items():
        for metric, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99)):
            expected = np.quantile(values, q, method=numpy_method)
            assert measured[f"{host}-{metric}"] == pytest.approx(expected, rel=1e-9), (host, metric)
