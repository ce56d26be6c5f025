"""Access logs: the echo sample bundle and public samples, checked against an independent regex parse."""

from __future__ import annotations

from datetime import datetime

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from tasks.warehouse.ingest import IngestError, ingest_bundle
from tasks.warehouse.sources.access_log_pattern import PatternError, compile_pattern
from tests.bundles import write_bundle
from tests.independent import assign_iterations, describe, read_clf_with_duration

QUIET = {"progress": lambda message: None}


def _query(warehouse, sql, params=None) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


@pytest.fixture
def echo_access_bundle(samples, tmp_path):
    """The real echo bundle's two access logs and its iterations and requirements."""
    manifest = yaml.safe_load((samples / "bundle-echo" / "run.yaml").read_text())
    sources = [s for s in manifest["sources"] if s["kind"] == "access_log"]
    files = {s["path"]: samples / "bundle-echo" / s["path"] for s in sources}
    root = write_bundle(
        tmp_path / "bundle", files, sources, manifest["iterations"], manifest["requirements"], run_id="echo"
    )
    return root, manifest


def test_echo_access_logs_match_an_independent_parse(echo_access_bundle, samples, tmp_path):
    root, manifest = echo_access_bundle
    warehouse = tmp_path / "w.duckdb"
    report = ingest_bundle(root, warehouse, **QUIET)

    windows = [(it["index"], it["start"], it["end"]) for it in manifest["iterations"]]
    frames = []
    for host in ("app1", "app2"):
        frame = read_clf_with_duration(samples / "bundle-echo" / host / "access.log")
        frame["host"] = host
        frames.append(frame)
    expected = pd.concat(frames, ignore_index=True)
    expected["iteration"] = assign_iterations(expected, windows, resolution_s=1)  # %t: whole seconds

    assert report.requests_by_side == {"server": len(expected)}
    assert report.unmapped_requests == int(expected["iteration"].isna().sum())
    stats = _query(warehouse, "select * from iteration_stats order by iteration, host")
    assert len(stats) == 6
    for row in stats.itertuples():
        rows = expected[(expected["iteration"] == row.iteration) & (expected["host"] == row.host)]
        want = describe(rows["elapsed_ms"])
        duration_s = (pd.Timestamp(windows[row.iteration - 1][2]) - pd.Timestamp(windows[row.iteration - 1][1])).total_seconds()
        assert row.calls == want["calls"]
        assert row.errors == int((rows["status_code"] >= 400).sum())
        assert row.calls_per_s == pytest.approx(want["calls"] / duration_s)
        for metric in ("avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"):
            assert getattr(row, metric) == pytest.approx(want[metric]), metric

    summary = _query(warehouse, "select * from iteration_summary order by iteration")
    for row in summary.itertuples():
        rows = expected[expected["iteration"] == row.iteration]
        assert row.calls == len(rows)
        assert row.p95_ms == pytest.approx(np.percentile(rows["elapsed_ms"], 95))

    by_status = _query(warehouse, "select iteration, host, status_code, calls from iteration_status_stats")
    want_status = expected.dropna(subset=["iteration"]).groupby(["iteration", "host", "status_code"]).size()
    got_status = by_status.set_index(["iteration", "host", "status_code"])["calls"]
    assert got_status.sort_index().to_dict() == {k: v for k, v in want_status.sort_index().items()}


def test_requests_outside_iterations_are_kept(echo_access_bundle, tmp_path):
    root, _ = echo_access_bundle
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, **QUIET)
    counts = _query(
        warehouse,
        "select count(*) as total, count(*) filter (where iteration is null) as unmapped, "
        "(select unmapped_requests from runs) as recorded from requests",
    )
    assert counts.total[0] == 4631 + 4630
    assert counts.unmapped[0] == counts.recorded[0]


def test_microsecond_durations_and_extra_quoted_fields(samples, tmp_path):
    """lograter's Apache log: quoted %h, virtual host, %D in µs and three quoted trailing fields."""
    raw = samples / "access-logs" / "lograter-access.log"
    pattern = '"%h" %v %t "%r" %>s %b %D "%{Referer}i" "%{X-Forwarded-Url}i" "%{User-Agent}i"'
    root = write_bundle(
        tmp_path / "b",
        {"web/access.log": raw},
        [{"kind": "access_log", "host": "web", "path": "web/access.log", "format": pattern, "duration_unit": "us"}],
        [{"index": 1, "start": "2012-12-20T00:00:00Z", "end": "2012-12-22T00:00:00Z", "load": {}}],
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    lines = raw.read_text().splitlines()
    durations_us = [int(line.split('] "')[1].split('" ')[1].split(" ")[2]) for line in lines]
    got = _query(tmp_path / "w.duckdb", "select count(*) n, sum(elapsed_ms) s, min(started_at) t0 from requests")
    assert got.n[0] == len(lines)
    assert got.s[0] == pytest.approx(sum(durations_us) / 1000)
    # [21/Dec/2012:00:01:03 +0100] is 23:01:03 UTC the day before
    assert got.t0[0] == pd.Timestamp("2012-12-20T23:01:03Z")


def test_nginx_default_log_with_preset(samples, tmp_path):
    raw = samples / "access-logs" / "lograter-nginx-default.log"
    root = write_bundle(
        tmp_path / "b",
        {"nginx.log": raw},
        [{"kind": "access_log", "host": "proxy", "path": "nginx.log", "preset": "nginx_combined"}],
        [{"index": 1, "start": "2018-03-12T00:00:00Z", "end": "2018-03-13T00:00:00Z", "load": {}}],
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    statuses = [int(line.split('" ')[1].split(" ")[0]) for line in raw.read_text().splitlines()]
    got = _query(tmp_path / "w.duckdb", "select status_code, count(*) n from requests group by 1 order by 1")
    assert dict(zip(got.status_code, got.n)) == pd.Series(statuses).value_counts().sort_index().to_dict()


def test_nginx_request_time_is_logged_at_the_end(tmp_path):
    line = '10.0.0.1 - - [01/Jan/2026:10:00:02 +0000] "GET /a?x=1 HTTP/1.1" 200 5 "-" "curl" 1.500\n'
    root = write_bundle(
        tmp_path / "b",
        {"n.log": line},
        [{"kind": "access_log", "host": "proxy", "path": "n.log", "preset": "nginx_timed"}],
        [{"index": 1, "start": "2026-01-01T10:00:00Z", "end": "2026-01-01T10:00:01Z", "load": {}}],
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    got = _query(tmp_path / "w.duckdb", "select label, started_at, elapsed_ms, iteration from requests")
    assert got.label[0] == "/a"
    assert got.elapsed_ms[0] == 1500
    assert got.started_at[0] == pd.Timestamp("2026-01-01T10:00:00.500Z")
    assert got.iteration[0] == 1


@pytest.mark.parametrize("zone", ["+0000", "+0100", "-0130", "+0530", "-1100", "+1345"])
def test_utc_offsets_of_every_sign_and_half_hours(zone, tmp_path):
    written = f"01/Jan/2026:10:00:02 {zone}"
    line = f'10.0.0.1 - - [{written}] "GET /a HTTP/1.1" 200 5 7\n'
    root = write_bundle(
        tmp_path / "b",
        {"a.log": line},
        [{"kind": "access_log", "host": "app", "path": "a.log", "preset": "tomcat_common_d", "duration_unit": "ms"}],
        [{"index": 1, "start": "2025-12-31T00:00:00Z", "end": "2026-01-02T00:00:00Z", "load": {}}],
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    got = _query(tmp_path / "w.duckdb", "select started_at from requests")
    expected = datetime.strptime(written, "%d/%b/%Y:%H:%M:%S %z")
    assert got.started_at[0] == pd.Timestamp(expected).tz_convert("UTC")


def test_percent_b_dash_is_a_response_without_a_body(tmp_path):
    # Tomcat/Apache %b: "Bytes sent, excluding HTTP headers, or '-' if zero" (a 304, a HEAD, a 204)
    lines = ['10.0.0.1 - - [01/Jan/2026:10:00:01 +0000] "GET /a HTTP/1.1" 200 512 3',
             '10.0.0.1 - - [01/Jan/2026:10:00:02 +0000] "GET /a HTTP/1.1" 304 - 1',
             '10.0.0.1 - - [01/Jan/2026:10:00:03 +0000] "HEAD /a HTTP/1.1" 200 - 2']
    root = write_bundle(
        tmp_path / "b",
        {"a.log": "\n".join(lines) + "\n"},
        [{"kind": "access_log", "host": "app", "path": "a.log", "preset": "tomcat_common_d", "duration_unit": "ms"}],
        [{"index": 1, "start": "2026-01-01T10:00:00Z", "end": "2026-01-01T10:01:00Z", "load": {}}],
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    got = _query(tmp_path / "w.duckdb", "select status_code, bytes from requests order by started_at")
    assert got.values.tolist() == [[200, 512], [304, 0], [200, 0]]


def _bad_log(good: int, bad_lines: list[str]) -> str:
    ok = '127.0.0.1 - - [01/Jan/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 10 7'
    return "\n".join([ok] * good + bad_lines) + "\n"


def test_malformed_lines_are_rejected_with_line_numbers(tmp_path):
    bad = ["this is not an access log line", '127.0.0.1 - - [01/Jan/2026:10:00:00 +0000] "GET /x HTTP/1.1" OK 10 7']
    root = write_bundle(
        tmp_path / "b",
        {"a.log": _bad_log(300, bad)},
        [{"kind": "access_log", "host": "a", "path": "a.log", "format": '%h %l %u %t "%r" %s %b %D', "duration_unit": "ms"}],
        [{"index": 1, "start": "2026-01-01T09:00:00Z", "end": "2026-01-01T11:00:00Z", "load": {}}],
    )
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    assert report.rejected_lines == 2
    rejected = _query(tmp_path / "w.duckdb", "select line_no, reason, excerpt, path from rejected_lines order by 1")
    assert list(rejected.line_no) == [301, 302]
    assert rejected.excerpt[0] == "this is not an access log line"
    assert rejected.reason[0].startswith("MISSING COLUMNS")
    assert 'column "status_item"' in rejected.reason[1] and '"OK"' in rejected.reason[1]
    assert set(rejected.path) == {"a.log"}


def test_too_many_rejected_lines_fail_and_leave_the_warehouse_unchanged(tmp_path, echo_access_bundle):
    good_root, _ = echo_access_bundle
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(good_root, warehouse, **QUIET)
    before = _query(warehouse, "select run_id, count(*) n from requests group by 1")

    root = write_bundle(
        tmp_path / "bad",
        {"a.log": _bad_log(50, ["garbage"] * 2)},
        [{"kind": "access_log", "host": "a", "path": "a.log", "format": '%h %l %u %t "%r" %s %b %D', "duration_unit": "ms"}],
        [{"index": 1, "start": "2026-01-01T09:00:00Z", "end": "2026-01-01T11:00:00Z", "load": {}}],
        run_id="echo",  # same run_id: a failed re-ingest must not remove the good one
    )
    with pytest.raises(IngestError, match=r"a\.log: 2 of 52 lines \(3\.85 %\)"):
        ingest_bundle(root, warehouse, **QUIET)
    after = _query(warehouse, "select run_id, count(*) n from requests group by 1")
    pd.testing.assert_frame_equal(before, after)
    assert _query(warehouse, "select count(*) n from rejected_lines").n[0] == 0


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ('%h "%r" %s', "no time item"),
        ("%h %t %b", "no status item"),
        ("%h %{%Y-%m-%d}t %s", "time item"),
        ("%h [%t] %s", "mixes text"),
    ],
)
def test_unsupported_patterns_say_which_item(pattern, message):
    with pytest.raises(PatternError, match=message):
        compile_pattern(pattern)


def test_pattern_columns():
    layout = compile_pattern('%h %l %u %t "%r" %>s %b %D')
    assert list(layout.columns.values()) == [
        "VARCHAR", "VARCHAR", "VARCHAR", "TIMESTAMP", "VARCHAR", "VARCHAR", "INTEGER", "BIGINT", "DOUBLE"
    ]
    assert list(layout.fields) == ["ts_written", "zone_text", "request", "status", "bytes", "duration"]
    assert list(layout.columns)[:3] == ["item1", "item2", "item3"]


def test_gorouter_lines_through_the_regex_preset(samples, tmp_path):
    raw = samples / "access-logs" / "lograter-latency.log"
    root = write_bundle(
        tmp_path / "b",
        {"rtr.log": raw.read_text() + "a line that is not from the router\n"},
        [{"kind": "access_log", "host": "router", "path": "rtr.log", "preset": "cloudfoundry_gorouter", "max_rejected_pct": 50}],
        [{"index": 1, "start": "2020-11-13T14:56:00Z", "end": "2020-11-13T14:57:00Z", "load": {}}],
    )
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    lines = raw.read_text().splitlines()
    want_ms = [float(line.split("response_time:")[1].split(" ")[0]) * 1000 for line in lines]
    got = _query(tmp_path / "w.duckdb", "select * from requests order by started_at")
    assert len(got) == 5 and report.rejected_lines == 1
    assert sorted(got.elapsed_ms) == pytest.approx(sorted(want_ms))
    assert list(got.status_code) == [204, 200, 202, 500, 202]
    assert got.started_at[0] == pd.Timestamp("2020-11-13T14:56:20.968448Z")
    assert list(got.iteration.isna()) == [False, False, False, True, True]
    assert got.label[3] == "/hex/pah/col"
    rejected = _query(tmp_path / "w.duckdb", "select line_no, reason from rejected_lines")
    assert list(rejected.line_no) == [6] and "regex" in rejected.reason[0]
