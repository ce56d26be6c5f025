"""Bad and hostile bundles: each refused with a clear error or kept as rejected lines, never a wrong number.

Each case is a mechanism of issue 14: YAML aliases past a budget, NaN thresholds, an iteration index past
INTEGER, impossible request values (negative or NaN durations, statuses, year 9999), gzip bombs and truncated
gzip files, and a file of junk lines (every reject counted, the first REJECTS_KEPT kept, in one insert).
The memory-heavy cases run in a subprocess under an address-space limit of 1 GB.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from tasks.bundle.manifest import ManifestError
from tasks.warehouse.ingest import ingest_bundle
from tasks.warehouse.sources.base import REJECTS_KEPT, SourceError
from tests.bundles import write_bundle

QUIET = {"progress": lambda message: None}
WINDOW = [{"index": 1, "start": "2026-12-02T14:00:00Z", "end": "2026-12-02T14:10:00Z"}]
REPO = Path(__file__).resolve().parents[2]


def _line(second: int, elapsed: str = "12", status: str = "200", when: str = "02/Dec/2026:14:00") -> str:
    return f'10.0.0.1 - - [{when}:{second:02d} +0000] "GET /a HTTP/1.1" {status} 5 {elapsed}'


def _access_bundle(tmp_path: Path, lines: list[str], **extra) -> Path:
    source = {"kind": "access_log", "host": "app", "path": "app/access.log", "preset": "tomcat_common_d",
              "duration_unit": "ms", "max_rejected_pct": 50}
    return write_bundle(tmp_path / "b", {"app/access.log": "\n".join(lines) + "\n"}, [source], WINDOW, **extra)


def _rows(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_impossible_request_values_are_rejected_lines_with_reasons(tmp_path):
    good = [_line(s, elapsed=str(10 + s)) for s in range(20)]
    bad = [_line(21, elapsed="-10210"), _line(22, elapsed="NaN"), _line(23, status="999"),
           _line(24, when="02/Dec/9999:14:00"), _line(25, when="02/Dec/0001:14:00")]
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(_access_bundle(tmp_path, good + bad), warehouse, **QUIET)
    (avg, count, maximum), = _rows(warehouse, "select avg(elapsed_ms), count(*), max(elapsed_ms) from requests")
    assert count == 20 and avg == pytest.approx(sum(10 + s for s in range(20)) / 20) and maximum == 29
    reasons = sorted(reason for (reason,) in _rows(warehouse, "select reason from rejected_lines"))
    assert reasons == sorted([
        "value: elapsed_ms is negative", "value: elapsed_ms is NaN",
        "value: status 999 is not an HTTP status (0 or 100..599)",
        *["value: started_at lies outside the run by more than the margin (thresholds.reject_outside_run_h)"] * 2,
    ])
    assert _rows(warehouse, "select rows_rejected from sources") == [(5,)]


def test_a_report_is_built_for_a_run_with_a_year_9999_line(tmp_path):
    from tasks.report.build import build_report

    warehouse = tmp_path / "w.duckdb"
    lines = [_line(s) for s in range(30)] + [_line(31, when="02/Dec/9999:14:00")]
    ingest_bundle(_access_bundle(tmp_path, lines), warehouse, **QUIET)
    files = build_report(warehouse, "test-run", tmp_path / "out", compare=False)
    assert files.path("html").stat().st_size > 0 and files.run_id == "test-run"
    assert _rows(warehouse, "select count(*), max(started_at) < '2027-01-01' from requests") == [(30, True)]


@pytest.mark.parametrize(("threshold", "field"), [(".nan", "requirements.0.threshold"), (".inf", "requirements.0.threshold")])
def test_a_nan_or_infinite_threshold_is_refused(tmp_path, threshold, field):
    root = _access_bundle(tmp_path, [_line(1)])
    text = (root / "run.yaml").read_text().replace("requirements: []", "requirements:\n- {id: r, metric: avg_ms, "
                                                   f"op: '<', threshold: {threshold}, side: server}}")
    (root / "run.yaml").write_text(text)
    with pytest.raises(ManifestError, match=field):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_an_iteration_index_past_integer_names_its_field(tmp_path):
    root = _access_bundle(tmp_path, [_line(1)])
    (root / "run.yaml").write_text((root / "run.yaml").read_text().replace("index: 1", f"index: {2**31}"))
    with pytest.raises(ManifestError, match=r"iterations\.0\.index: Input should be less than or equal to 2147483647"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_yaml_aliases_past_the_budget_are_refused_quickly(tmp_path):
    root = _access_bundle(tmp_path, [_line(1)])
    levels = ["a: &a [x, x, x, x, x, x, x, x, x]"] + [
        f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 9)}]" for n in range(8)]
    bomb = "labels:\n" + "".join(f"  {level}\n" for level in levels)
    (root / "run.yaml").write_text((root / "run.yaml").read_text() + bomb)
    with pytest.raises(ManifestError, match="expand to more than"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_a_large_value_repeated_by_aliases_is_refused_by_its_expanded_size(tmp_path):
    """Issue 18 fault 3: few nodes (under the node budget), but one 400 KB string under an anchor and 50
    aliases of it expand to 20 MB (the probe's 4 MB x 100,000 aborted with an 8 GB allocation)."""
    root = _access_bundle(tmp_path, [_line(1)])
    big = "x" * 400_000
    text = (root / "run.yaml").read_text().replace(
        "index: 1", "index: 1\n  load: {p: [&p " + big + ", " + ", ".join(["*p"] * 50) + "]}")
    (root / "run.yaml").write_text(text)
    with pytest.raises(ManifestError, match=r"run\.yaml: not valid YAML: its anchors and aliases expand to more than "
                                            r"16,777,216 characters"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_long_labels_are_refused(tmp_path):
    root = _access_bundle(tmp_path, [_line(1)], labels={"k": "v" * 5000})
    with pytest.raises(ManifestError, match="at most 256 characters"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_a_truncated_gzip_file_is_named_truncated(tmp_path):
    data = gzip.compress(("\n".join(_line(s % 60) for s in range(5000)) + "\n").encode())
    source = {"kind": "access_log", "host": "app", "path": "app/access.log.gz", "preset": "tomcat_common_d",
              "duration_unit": "ms"}
    root = write_bundle(tmp_path / "b", {"app/access.log.gz": data[: len(data) // 2]}, [source], WINDOW)
    with pytest.raises(SourceError, match=r"sources\.0 \(app/access\.log\.gz\): truncated gzip file"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


_UNDER_1_GB = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from tasks.warehouse.ingest import ingest_bundle
    from tasks.warehouse.sources.base import SourceError
    from tasks.warehouse.ingest import IngestError
    try:
        ingest_bundle(sys.argv[1], sys.argv[2], progress=lambda m: None)
    except (SourceError, IngestError) as exc:
        print(str(exc).splitlines()[0])
    # VmHWM, not ru_maxrss: ru_maxrss is carried over from the parent across fork+exec (the test runner's
    # own peak in a long session); VmHWM belongs to this process's address space only.
    hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
    print("peak_kb", int(hwm.split()[1]))
""")


def _ingest_limited(root: Path, warehouse: Path) -> tuple[str, int]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DUCKDB_MEMORY_LIMIT": "512MB"}
    done = subprocess.run([sys.executable, "-c", _UNDER_1_GB, str(root), str(warehouse)], capture_output=True,
                          text=True, env=env, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    *message, peak = done.stdout.strip().splitlines()
    return "\n".join(message), int(peak.split()[1])


def test_a_gzip_bomb_is_refused_within_1_gb(tmp_path):
    bomb = gzip.compress(b"x" * (600 << 20), compresslevel=9)  # ~0.6 MB that unpacks to 600 MB, one line
    source = {"kind": "vmstat", "host": "app", "path": "app/vmstat.log.gz"}
    root = write_bundle(tmp_path / "b", {"app/vmstat.log.gz": bomb}, [source], WINDOW)
    message, peak_kb = _ingest_limited(root, tmp_path / "w.duckdb")
    assert "possible gzip bomb" in message and "sources.0 (app/vmstat.log.gz)" in message
    assert peak_kb < 1 << 20


def test_a_file_of_junk_lines_is_counted_in_bulk_within_1_gb(tmp_path):
    junk = "".join(f"junk line {n} {'z' * 80}\n" for n in range(200_000))  # 18 MB, every line rejected
    root = write_bundle(tmp_path / "b", {"app/vmstat.log": junk},
                        [{"kind": "vmstat", "host": "app", "path": "app/vmstat.log", "max_rejected_pct": 100,
                          "started_at": "2026-12-02T14:00:00Z", "interval_s": 1}], WINDOW)
    warehouse = tmp_path / "w.duckdb"
    _, peak_kb = _ingest_limited(root, warehouse)
    assert peak_kb < 1 << 20
    assert _rows(warehouse, "select rows_rejected from sources") == [(200_000,)]
    assert _rows(warehouse, "select count(*), min(line_no), max(line_no) from rejected_lines") == [(REJECTS_KEPT, 1, REJECTS_KEPT)]


def test_a_delimited_log_of_long_junk_lines_is_counted_within_1_gb(tmp_path):
    """DuckDB holds ~35 KB per stored reject of a 1.9 KB line (2 M such lines: out of memory): the load skips
    them, every line not loaded is counted, and only the file's first lines are read for reasons."""
    junk = [f"junk {n} {'z' * 1890}" for n in range(40_000)]  # 76 MB: 1.4 GB when every reject is stored
    root = _access_bundle(tmp_path, [_line(s) for s in range(10)] + junk)
    (root / "run.yaml").write_text((root / "run.yaml").read_text().replace("max_rejected_pct: 50", "max_rejected_pct: 100"))
    warehouse = tmp_path / "w.duckdb"
    message, peak_kb = _ingest_limited(root, warehouse)
    assert message == "" and peak_kb < 1 << 20
    assert _rows(warehouse, "select rows_loaded, rows_rejected from sources") == [(10, 40_000)]
    (kept, first, last, reason), = _rows(warehouse, "select count(*), min(line_no), max(line_no), any_value(reason) "
                                                    "from rejected_lines")
    assert first == 11 and last == 10 + kept and 1000 < kept <= REJECTS_KEPT  # the first lines, numbered
    assert "MISSING COLUMNS" in reason


def test_a_catastrophic_user_regex_ends_at_once(tmp_path):
    """`(a+)+b` backtracks 2^n times in Python's re on a line of a's; RE2 matches in linear time."""
    source = {"kind": "access_log", "host": "app", "path": "app/x.log", "regex": r"(?P<time>(a+)+b)(?P<status>\d)?",
              "max_rejected_pct": 100}
    root = write_bundle(tmp_path / "b", {"app/x.log": "a" * 40 + "\n"}, [source], WINDOW)
    started = time.perf_counter()
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    assert time.perf_counter() - started < 30
    assert _rows(tmp_path / "w.duckdb", "select line_no, reason from rejected_lines") == [(1, "does not match the source's regex")]


def test_a_regex_re2_cannot_run_is_refused_with_its_reason(tmp_path):
    source = {"kind": "access_log", "host": "app", "path": "app/x.log", "regex": r"(?P<time>a)(?P<status>1)\1"}
    root = write_bundle(tmp_path / "b", {"app/x.log": "a1a\n"}, [source], WINDOW)
    with pytest.raises(SourceError, match=r"sources\.0 \(app/x\.log\)\.regex: not a regular expression RE2 accepts.*\\1"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_a_huge_line_is_a_clear_error_or_a_counted_reject(tmp_path):
    """A 3 MB line (past DuckDB's 2 MB line limit and the csv module's field limit) is never a traceback
    and never lost: as a header it is refused naming the file, inside a log it is a rejected line."""
    huge = "x" * (3 << 20)
    for kind, name in (("k6_csv", "k.csv"), ("jtl", "r.jtl")):
        root = write_bundle(tmp_path / kind, {f"g/{name}": huge + "\n1,2\n"}, [{"kind": kind, "host": "g", "path": f"g/{name}"}], WINDOW)
        with pytest.raises(SourceError, match=rf"sources\.0 \(g/{name}\): .*(longer than 1,048,576|not k6 CSV output)"):
            ingest_bundle(root, tmp_path / f"{kind}.duckdb", **QUIET)
    lines = [_line(s) for s in range(50)] + [_line(51).replace("/a ", "/" + huge + " ")] + [_line(s) for s in range(50)]
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(_access_bundle(tmp_path, lines), warehouse, **QUIET)
    assert _rows(warehouse, "select rows_loaded, rows_rejected from sources") == [(100, 1)]


def test_rejects_past_the_kept_number_are_counted_in_a_delimited_log(tmp_path):
    lines = [_line(s) for s in range(10)] + [f"junk {n}" for n in range(REJECTS_KEPT + 2000)] + [_line(s) for s in range(10)]
    warehouse = tmp_path / "w.duckdb"
    root = _access_bundle(tmp_path, lines)
    text = (root / "run.yaml").read_text().replace("max_rejected_pct: 50", "max_rejected_pct: 100")
    (root / "run.yaml").write_text(text)
    ingest_bundle(root, warehouse, **QUIET)
    assert _rows(warehouse, "select rows_loaded, rows_rejected from sources") == [(20, REJECTS_KEPT + 2000)]
    # DuckDB stops storing at REJECTS_KEPT errors (a junk line has several): the first lines are kept
    (kept, first), = _rows(warehouse, "select count(*), min(line_no) from rejected_lines")
    assert 0 < kept <= REJECTS_KEPT and first == 11


@pytest.mark.parametrize("date", ["9999-12-31 23:59:59", "0001-01-01 00:00:00"])
def test_a_host_sample_dated_far_outside_the_run_is_rejected_and_the_report_builds(tmp_path, date):
    from tasks.report.build import build_report

    head = ("procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
            " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n")
    row = " 1  0      0 100000  2000 30000    0    0     0     0  100  200  5  2 93  0  0 {}\n"
    text = head + "".join(row.format(f"2026-12-02 14:00:{s:02d}") for s in range(30)) + row.format(date)
    root = write_bundle(tmp_path / "b", {"a/v.log": text}, [{"kind": "vmstat", "host": "a", "path": "a/v.log", "max_rejected_pct": 10}], WINDOW)
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, **QUIET)
    assert _rows(warehouse, "select rows_loaded, rows_rejected from sources") == [(30, 1)]
    assert _rows(warehouse, "select line_no, reason from rejected_lines") == [
        (33, "value: sampled_at lies outside the run by more than the margin (thresholds.reject_outside_run_h)")]
    assert build_report(warehouse, "test-run", tmp_path / "out", compare=False).path("html").stat().st_size > 0


def test_a_bundle_of_many_one_line_sources_loads_every_row_in_bounded_memory(tmp_path, monkeypatch):
    """Issue 18 fault 4: each source used to leave 0.3-0.6 MB in the ingest's transaction until the commit (a
    temp table made per source, a row group per parallel insert): 10,000 one-line logs ran out of memory. Under
    a DuckDB limit of 64 MB (a 30 MB read buffer among it), 300 sources (100-180 MB that way) must load, every row in its place."""
    count = 300
    logs = {f"app/{n:03d}.log": _line(n % 60, elapsed=str(10 + n), when=f"02/Dec/2026:14:{n // 60:02d}") + "\n"
            for n in range(count)}
    sources = [{"kind": "access_log", "host": "app", "path": path, "preset": "tomcat_common_d", "duration_unit": "ms"}
               for path in logs]
    root = write_bundle(tmp_path / "b", logs, sources, WINDOW)
    monkeypatch.setenv("PERFCAMPAIGN_MEMORY_LIMIT", "64MB")
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, **QUIET)
    assert _rows(warehouse, "select count(*), sum(elapsed_ms), count(distinct source_path), count(iteration) "
                            "from requests") == [(count, sum(10 + n for n in range(count)), count, count)]
    assert _rows(warehouse, "select count(*), sum(rows_loaded), sum(rows_rejected) from sources") == [(count, count, 0)]
