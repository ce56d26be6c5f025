"""Small access logs read in batches (issue 18 fault 4) give exactly what reading them one by one gives.

The bundle: 300 small logs on two hosts, some pinned to an iteration, some in another duration unit, stamps on
the second that straddles the iterations' boundary, and files with a junk line, a line cut inside quotes, an
impossible status, or no bytes. It is ingested with batches and with every source read alone; every public
table must be equal, and the counts, rejected lines and placements equal those computed from the raw lines.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tasks.warehouse import source_batches
from tasks.warehouse.ingest import IngestError, ingest_bundle
from tests.bundles import write_bundle
from tests.golden.public_tables import snapshot

COUNT = 300
BOUNDARY_S = 300.4  # iteration 2 starts 300.4 s after 14:00:00: the stamp 14:05:00 overlaps it more than iteration 1
ITERATIONS = [{"index": 1, "start": "2026-12-02T14:00:00Z", "end": "2026-12-02T14:05:00.400Z"},
              {"index": 2, "start": "2026-12-02T14:05:00.400Z", "end": "2026-12-02T14:10:00Z"}]
JUNK = "not an access log line"


def _line(second: int, elapsed: int, status: int = 200) -> str:
    return f'10.0.0.1 - - [02/Dec/2026:14:{second // 60:02d}:{second % 60:02d} +0000] "GET /a HTTP/1.1" {status} 5 {elapsed}'


def _bundle(root: Path) -> tuple[Path, dict[str, dict]]:
    """The bundle, and per path what its raw lines hold: good (second, elapsed in the file's unit), rejected
    line numbers, impossible values, pinned iteration, unit."""
    files, sources, expected = {}, [], {}
    for n in range(COUNT):
        host = "app1" if n % 2 else "app2"
        path = f"{host}/{n:03d}.log"
        good = [(300 if (n + k) % 10 == 0 else (n * 7 + k * 13) % 600, 10 + n + k) for k in range(1 + n % 3)]
        lines = [_line(second, elapsed) for second, elapsed in good]
        rejected_at, impossible = [], 0
        if n % 37 == 5:
            lines.insert(1, JUNK)
            rejected_at.append(2)
        if n % 53 == 7:
            lines.insert(0, _line(1, 12).replace('HTTP/1.1"', "HTTP/1.1"))  # the quote never closes
            rejected_at.append(1)
        if n % 61 == 3:
            lines.append(_line(2, 12, status=999))
            impossible = 1
        unit = "us" if n >= 240 else "ms"
        pinned = 1 if 200 <= n < 240 else None
        source = {"kind": "access_log", "host": host, "path": path, "preset": "tomcat_common_d",
                  "duration_unit": unit, "max_rejected_pct": 100}
        if pinned:
            source["iteration"] = pinned
        sources.append(source)
        files[path] = "" if n == 150 else "\n".join(lines) + "\n"
        good = [] if n == 150 else good
        rejected_at, impossible = ([], 0) if n == 150 else (rejected_at, impossible)
        expected[path] = {"good": good, "rejected_at": rejected_at, "impossible": impossible, "pinned": pinned,
                          "unit": unit}
    return write_bundle(root, files, sources, ITERATIONS), expected


def _iteration(second: int) -> int:
    """The iteration whose window the stamp's second [second, second + 1) overlaps most (equal: the earlier)."""
    in_first = min(second + 1, BOUNDARY_S) - second
    return 1 if in_first >= 0.5 else 2


def _ingest(bundle: Path, warehouse: Path) -> list[str]:
    messages: list[str] = []
    ingest_bundle(bundle, warehouse, progress=messages.append)
    return messages


def _rows(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return sorted(con.execute(sql).fetchall(), key=repr)


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> tuple[Path, Path, dict[str, dict], list[str]]:
    work = tmp_path_factory.mktemp("batches")
    bundle, expected = _bundle(work / "bundle")
    batched = _ingest(bundle, work / "batched.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source_batches, "BATCH_FILES", 1)  # every source a batch of one: read alone
        alone = _ingest(bundle, work / "alone.duckdb")
    assert not any("together" in message for message in alone)
    return work / "batched.duckdb", work / "alone.duckdb", expected, batched


def test_batches_give_every_public_table_as_reading_alone(ingested):
    batched, alone, _, messages = ingested
    # 0-199 (ms; the empty 150 read alone cuts it in two), 200-239 (pinned), 240-299 (us)
    assert [message.split(":")[0] for message in messages if "together" in message] == [
        "reading 150 access_log sources together", "reading 49 access_log sources together",
        "reading 40 access_log sources together",
        "reading 60 access_log sources together"]
    assert snapshot(batched) == snapshot(alone)


def test_counts_rejects_and_placement_are_those_of_the_raw_lines(ingested):
    batched, _, expected, _ = ingested
    assert _rows(batched, "select path, rows_loaded, rows_rejected, resolution_us from sources") == sorted(
        ((path, len(raw["good"]), len(raw["rejected_at"]) + raw["impossible"], 1_000_000)
         for path, raw in expected.items()), key=repr)
    assert _rows(batched, "select path, line_no from rejected_lines where line_no is not null") == sorted(
        ((path, line_no) for path, raw in expected.items() for line_no in raw["rejected_at"]), key=repr)
    assert _rows(batched, "select path from rejected_lines where line_no is null") == sorted(
        (path,) for path, raw in expected.items() if raw["impossible"])
    scale = {"ms": 1.0, "us": 0.001}
    assert _rows(batched, "select source_path, epoch(started_at)::bigint - epoch('2026-12-02 14:00:00+00'::timestamptz)"
                          "::bigint, round(elapsed_ms, 6), iteration from requests") == sorted(
        ((path, second, round(elapsed * scale[raw["unit"]], 6),
          raw["pinned"] or _iteration(second))
         for path, raw in expected.items() for second, elapsed in raw["good"]), key=repr)


def test_a_file_of_a_batch_over_its_reject_limit_is_named(tmp_path):
    logs = {f"app/{n}.log": _line(n, 10) + "\n" + (JUNK + "\n" if n == 7 else "") for n in range(20)}
    sources = [{"kind": "access_log", "host": "app", "path": path, "preset": "tomcat_common_d",
                "duration_unit": "ms"} for path in logs]
    bundle = write_bundle(tmp_path / "b", logs, sources, ITERATIONS)
    with pytest.raises(IngestError, match=r"^app/7\.log: 1 of 2 lines \(50\.00 %\) could not be read(.|\n)*line 2:"):
        ingest_bundle(bundle, tmp_path / "w.duckdb", progress=lambda message: None)
    assert not (tmp_path / "w.duckdb").exists() or _rows(tmp_path / "w.duckdb", "select count(*) from runs") == [(0,)]
