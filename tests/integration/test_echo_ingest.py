"""A bundle recorded by real k6 against the real JVM echo service, ingested, checked against the raw files."""

from __future__ import annotations

import gzip
import json

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from tasks.warehouse.ingest import ingest_bundle
from tests.independent import assign_iterations, describe, read_clf_with_duration

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def loaded(echo_bundle, tmp_path_factory):
    warehouse = tmp_path_factory.mktemp("echo-warehouse") / "w.duckdb"
    report = ingest_bundle(echo_bundle, warehouse, progress=lambda m: None)
    return echo_bundle, warehouse, report


def _df(warehouse, sql):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql).df()


def _k6_durations(path) -> pd.DataFrame:
    with gzip.open(path, "rt") as lines:
        points = [json.loads(line) for line in lines]
    rows = [
        (p["data"]["value"], p["data"]["tags"].get("expected_response") == "false")
        for p in points
        if p.get("type") == "Point" and p["metric"] == "http_req_duration"
    ]
    return pd.DataFrame(rows, columns=["elapsed_ms", "failed"])


def test_client_side_matches_the_k6_points(loaded):
    bundle, warehouse, _ = loaded
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    got = _df(warehouse, "select * from iteration_stats where side = 'client' order by iteration").set_index("iteration")
    k6_sources = [s for s in manifest["sources"] if s["kind"] == "k6_json"]
    assert len(got) == len(k6_sources) == len(manifest["iterations"])
    for source in k6_sources:
        points = _k6_durations(bundle / source["path"])
        want = describe(points["elapsed_ms"])
        row = got.loc[source["iteration"]]
        assert row["calls"] == want["calls"] > 0
        assert row["errors"] == int(points["failed"].sum())
        for metric in ("avg_ms", "p50_ms", "p95_ms", "p99_ms", "max_ms"):
            assert row[metric] == pytest.approx(want[metric], rel=1e-9), metric


def test_server_side_matches_the_access_logs(loaded):
    bundle, warehouse, report = loaded
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    windows = [(it["index"], it["start"], it["end"]) for it in manifest["iterations"]]
    frames = []
    for source in (s for s in manifest["sources"] if s["kind"] == "access_log"):
        frame = read_clf_with_duration(bundle / source["path"], duration_to_ms=0.001)  # %D in µs
        frame["host"] = source["host"]
        frames.append(frame)
    expected = pd.concat(frames, ignore_index=True)
    expected["iteration"] = assign_iterations(expected, windows, resolution_s=1)  # %t: whole seconds
    assert report.requests_by_side["server"] == len(expected)
    got = _df(warehouse, "select * from iteration_stats where side = 'server'")
    for row in got.itertuples():
        rows = expected[(expected["iteration"] == row.iteration) & (expected["host"] == row.host)]
        assert row.calls == len(rows)
        assert row.avg_ms == pytest.approx(rows["elapsed_ms"].mean())
        assert row.p95_ms == pytest.approx(np.percentile(rows["elapsed_ms"], 95))
    unmapped = _df(warehouse, "select unmapped_requests from runs").unmapped_requests[0]
    assert unmapped == int(expected["iteration"].isna().sum())


def test_k6_summaries_agree_with_the_points(loaded):
    _, warehouse, report = loaded
    checks = _df(warehouse, "select iteration, metric, summary_value, points_value, agrees from k6_summary_checks")
    assert len(checks) > 0
    assert checks["agrees"].all(), checks[~checks["agrees"]]
    assert not [note for source in report.sources for note in source.notes if "disagree" in note.lower()]


def test_the_demo_requirements_are_judged(loaded):
    _, warehouse, _ = loaded
    verdicts = _df(warehouse, "select requirement_id, passed from verdicts where iteration is null order by 1")
    assert list(verdicts.requirement_id) == ["avg-under-250", "errors-under-1pct", "p95-under-500"]
    assert verdicts.passed.notna().all()
