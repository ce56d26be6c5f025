"""The demo stage records a complete, self-consistent bundle: real JVM echo services, real k6, real monitors.

Expected numbers come from the raw files (gzip + json, pandas), never from the recorder's own bookkeeping.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tasks.bundle.manifest import load_manifest

pytestmark = pytest.mark.integration

# Tomcat's '%h %l %u %t "%r" %s %b %D', one named group per field.
ACCESS_LINE = (
    r'^(?P<client>\S+) (?P<ident>\S+) (?P<user>\S+) \[(?P<ts>[^\]]+)\] '
    r'"(?P<method>[A-Z]+) (?P<path>\S+) (?P<proto>HTTP/[0-9.]+)" '
    r'(?P<status>\d{3}) (?P<bytes>\d+|-) (?P<elapsed_us>\d+)$'
)


def manifest(bundle: Path) -> dict:
    return yaml.safe_load((bundle / "run.yaml").read_text(encoding="utf-8"))


def sources(bundle: Path, kind: str) -> list[dict]:
    return [source for source in manifest(bundle)["sources"] if source["kind"] == kind]


def k6_points(path: Path, metric: str) -> pd.DataFrame:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    points = [r["data"] for r in records if r["type"] == "Point" and r["metric"] == metric]
    return pd.DataFrame({
        "time": pd.to_datetime([p["time"] for p in points], utc=True, format="ISO8601"),
        "value": [p["value"] for p in points],
        "server": [p["tags"].get("server") for p in points],
    })


def access_log(path: Path) -> pd.DataFrame:
    lines = pd.Series(path.read_text(encoding="utf-8").splitlines())
    rows = lines.str.extract(ACCESS_LINE)
    bad = rows.isna().any(axis=1)
    assert not bad.any(), f"{path}: lines not in the Tomcat pattern: {lines[bad].head().tolist()}"
    rows["started_at"] = pd.to_datetime(rows["ts"], format="%d/%b/%Y:%H:%M:%S %z", utc=True)
    rows["elapsed_us"] = rows["elapsed_us"].astype(int)
    return rows


def access_logs(bundle: Path) -> dict[str, pd.DataFrame]:
    return {source["host"]: access_log(bundle / source["path"]) for source in sources(bundle, "access_log")}


def echo_calls(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[(rows["method"] == "POST") & (rows["path"] == "/echo")]


def test_each_iteration_k6_points_match_its_summary(echo_bundle: Path) -> None:
    summaries = {s["iteration"]: s for s in sources(echo_bundle, "k6_summary")}
    for source in sources(echo_bundle, "k6_json"):
        counted = k6_points(echo_bundle / source["path"], "http_reqs")["value"].sum()
        summary = json.loads((echo_bundle / summaries[source["iteration"]]["path"]).read_text())
        assert counted > 0
        assert counted == summary["metrics"]["http_reqs"]["count"], source["path"]


def test_access_logs_hold_every_k6_request_and_the_readiness_checks(echo_bundle: Path) -> None:
    points = pd.concat([k6_points(echo_bundle / s["path"], "http_reqs") for s in sources(echo_bundle, "k6_json")])
    logs = access_logs(echo_bundle)
    assert sum(len(echo_calls(rows)) for rows in logs.values()) == points["value"].sum()
    for host, rows in logs.items():
        assert len(echo_calls(rows)) == points.loc[points["server"] == host, "value"].sum(), host
        others = rows.drop(echo_calls(rows).index)
        # start_echo waits for one GET /health; the service logs it like any other request
        assert others[["method", "path", "status"]].values.tolist() == [["GET", "/health", "200"]], host


def test_access_log_times_lie_within_the_run(echo_bundle: Path) -> None:
    iterations = manifest(echo_bundle)["iterations"]
    first_start = pd.Timestamp(min(it["start"] for it in iterations))
    last_end = pd.Timestamp(max(it["end"] for it in iterations))
    slack = pd.Timedelta(seconds=1)  # %t has whole seconds
    for host, rows in access_logs(echo_bundle).items():
        calls = echo_calls(rows)["started_at"]
        assert calls.between(first_start - slack, last_end + slack).all(), host
        readiness = rows.drop(echo_calls(rows).index)["started_at"]
        assert (readiness <= first_start).all(), host


def test_service_injects_errors_and_slow_calls(echo_bundle: Path) -> None:
    failed = pd.concat([k6_points(echo_bundle / s["path"], "http_req_failed") for s in sources(echo_bundle, "k6_json")])
    server_errors = 0
    for host, rows in access_logs(echo_bundle).items():
        total = len(rows)  # the per-instance counter counts every request, readiness check included
        assert (rows["status"] == "500").sum() == total // 1009, host
        assert (rows["elapsed_us"] >= 120_000).sum() >= total // 997, host
        assert (rows.loc[rows["status"] == "200", "bytes"] != "-").all(), host
        server_errors += (rows["status"] == "500").sum()
    assert failed["value"].sum() == server_errors


def test_monitors_sampled_through_the_run(echo_bundle: Path) -> None:
    iterations = manifest(echo_bundle)["iterations"]
    last_end = pd.Timestamp(max(it["end"] for it in iterations))
    (vmstat,) = sources(echo_bundle, "vmstat")
    lines = (echo_bundle / vmstat["path"]).read_text().splitlines()
    assert lines[1].split()[-1] == "UTC"
    data = [line for line in lines[2:] if line.split() and line.split()[0].isdigit()]  # the header pair repeats
    stamps = pd.to_datetime([" ".join(line.split()[-2:]) for line in data], utc=True)
    assert stamps.min() <= pd.Timestamp(iterations[0]["start"]) and stamps.max() >= last_end.floor("s")
    last_start = pd.Timestamp(max(it["start"] for it in iterations))
    for jstat in sources(echo_bundle, "jstat"):
        rows = (echo_bundle / jstat["path"]).read_text().splitlines()
        assert rows[0].split()[0] == "Timestamp"
        # each row's time: first_sample_at + its Timestamp (seconds since the JVM started) - the first row's; a busy
        # machine's jstat skips a second now and then, so what holds is that its samples reach the last iteration
        offsets = [float(row.split()[0]) for row in rows[1:]]
        last_sample = pd.Timestamp(jstat["first_sample_at"]) + pd.Timedelta(seconds=offsets[-1] - offsets[0])
        assert last_sample >= last_start, jstat["path"]


def test_manifest_lists_exactly_the_files_of_the_bundle(echo_bundle: Path) -> None:
    raw = manifest(echo_bundle)
    listed = {source["path"] for source in raw["sources"]}
    present = {p.relative_to(echo_bundle).as_posix() for p in echo_bundle.rglob("*") if p.is_file()} - {"run.yaml"}
    assert listed == present
    assert raw["format"] == 1 and raw["campaign"] == "demo" and raw["run_id"].startswith("demo-")
    assert [it["load"]["vus"] for it in raw["iterations"]] == [1, 3]
    assert {(s["kind"], s.get("role")) for s in raw["sources"]} == {
        ("access_log", "sut"), ("jstat", "sut"), ("vmstat", "sut"), ("k6_json", "loadgen"), ("k6_summary", "loadgen")}
    for source in raw["sources"]:
        if source["kind"] == "k6_json":
            assert (echo_bundle / source["path"]).read_bytes()[:2] == b"\x1f\x8b"  # gzip, as the name says
    assert load_manifest(echo_bundle).run_id == raw["run_id"]
