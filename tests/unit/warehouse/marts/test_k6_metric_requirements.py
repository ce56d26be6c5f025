"""A k6 custom metric (Trend, Counter, Rate) as a requirement's metric, in its own unit, judged from the
raw points of `--out json` (kept in k6_metric_points) with figures computed here from the same points."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.lakeserver import on_both_engines

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
RNG = np.random.default_rng(7)
# per iteration (10 s each, 20 s apart): Trend values (ms), Counter increments, Rate values (0/1)
TREND = {1: RNG.gamma(2, 40, 50), 2: RNG.gamma(2, 90, 80)}
COUNTER = {1: RNG.integers(1, 5, 30), 2: RNG.integers(1, 9, 30)}
RATE = {1: RNG.integers(0, 2, 40), 2: (RNG.random(40) < 0.9).astype(int)}


def _k6_json() -> str:
    def point(metric, at, value, tags):
        return {"type": "Point", "metric": metric, "data": {"time": at.isoformat(), "value": float(value), "tags": tags}}

    lines = [{"type": "Metric", "metric": name, "data": {"name": name, "type": kind, "contains": "default"}}
             for name, kind in (("cm_latency", "trend"), ("cm_handles", "counter"), ("cm_ok", "rate"),
                                ("http_req_duration", "trend"), ("http_reqs", "counter"))]
    for iteration in (1, 2):
        begin = START + timedelta(seconds=20 * (iteration - 1))
        for metric, values in (("cm_latency", TREND), ("cm_handles", COUNTER), ("cm_ok", RATE)):
            for n, value in enumerate(values[iteration]):
                at = begin + timedelta(seconds=9.9 * n / len(values[iteration]))
                lines.append(point(metric, at, value, {"name": "read-cm-handle" if n % 2 else "write", "scenario": "s"}))
        for n in range(10):  # requests and a built-in counter: not custom, never in k6_metric_points
            at = begin + timedelta(seconds=n)
            lines.append(point("http_req_duration", at, 5, {"name": "/x", "status": "200", "method": "GET"}))
            lines.append(point("http_reqs", at, 1, {"name": "/x"}))
    return "\n".join(json.dumps(line) for line in lines) + "\n"


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("k6metrics")
    iterations = [{"index": i, "start": (START + timedelta(seconds=20 * (i - 1))).isoformat(),
                   "end": (START + timedelta(seconds=20 * (i - 1) + 10)).isoformat(), "load": {"vus": i}} for i in (1, 2)]
    requirements = [
        {"id": "latency-p95", "k6_metric": "cm_latency", "metric": "p95", "op": "<", "threshold": 200, "side": "client",
         "unit": "ms"},
        {"id": "read-latency-avg", "k6_metric": "cm_latency", "metric": "avg", "op": "<", "threshold": 200,
         "side": "client", "label": "read-*"},
        {"id": "handles-per-s", "k6_metric": "cm_handles", "metric": "rate", "op": ">=", "threshold": 10,
         "side": "client", "unit": "CM-handles/s"},
        {"id": "handles", "k6_metric": "cm_handles", "metric": "count", "op": ">=", "threshold": 100, "side": "client"},
        {"id": "ok-share", "k6_metric": "cm_ok", "metric": "rate", "op": ">=", "threshold": 0.8, "side": "client"},
    ]
    source = {"kind": "k6_json", "host": "loadgen", "path": "k6.json"}
    root = write_bundle(tmp_path / "b", {"k6.json": _k6_json()}, [source], iterations, requirements)
    path = tmp_path / "w.duckdb"
    ingest_bundle(root, path, progress=lambda m: None)
    return path


warehouse = on_both_engines("warehouse_file", "k6metrics")  # the marts' checks on a file and on a lake


def test_custom_metric_points_are_kept_with_their_type(warehouse):
    with open_warehouse(warehouse) as con:
        rows = dict(((m, t), n) for m, t, n in con.execute(
            "select metric, metric_type, count(*) from k6_metric_points group by all").fetchall())
    assert rows == {("cm_latency", "trend"): 130, ("cm_handles", "counter"): 60, ("cm_ok", "rate"): 80}


def test_a_k6_metric_requirement_is_judged_on_its_points(warehouse):
    with open_warehouse(warehouse) as con:
        got = {(r, i): (m, rule) for r, i, m, rule in con.execute(
            "select requirement_id, iteration, measured, rule from verdicts").fetchall()}
        (sentence,) = con.execute("select sentence from conclusions where subject = 'handles-per-s'").fetchone()
    for i in (1, 2):
        assert got[("latency-p95", i)][0] == pytest.approx(np.percentile(TREND[i], 95))
        assert got[("read-latency-avg", i)][0] == pytest.approx(TREND[i][1::2].mean())
        assert got[("handles-per-s", i)][0] == pytest.approx(COUNTER[i].sum() / 10)
        assert got[("handles", i)][0] == pytest.approx(COUNTER[i].sum())
        assert got[("ok-share", i)][0] == pytest.approx(RATE[i].mean())
    assert got[("handles-per-s", None)][1] == "client cm_handles.rate >= 10 CM-handles/s"
    assert got[("read-latency-avg", None)][1] == "client cm_latency.avg < 200 (label read-*)"
    worst = min(COUNTER[i].sum() / 10 for i in (1, 2))
    assert f"client cm_handles.rate {worst:.4g} CM-handles/s" in sentence and "limit >= 10 CM-handles/s" in sentence


def test_a_statistic_needs_its_k6_metric():
    from pydantic import ValidationError

    from tasks.bundle.manifest import Requirement

    with pytest.raises(ValidationError, match="name it with k6_metric"):
        Requirement(id="x", metric="rate", op=">", threshold=1, side="client")
    with pytest.raises(ValidationError, match="side client"):
        Requirement(id="x", k6_metric="m", metric="avg", op=">", threshold=1, side="server")
