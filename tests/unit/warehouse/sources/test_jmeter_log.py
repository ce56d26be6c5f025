"""JMeter summariser lines (jmeter.log / stdout) into jmeter_summaries, checked against a token-split parse."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tasks.warehouse.ingest import IngestError, ingest_bundle
from tests.bundles import write_bundle

QUIET = {"progress": lambda message: None}
DATA = Path(__file__).resolve().parents[3] / "data" / "jmeter"
COLUMNS = (
    "line_no, logged_at, summariser, kind, samples, window_s, rate_per_s, avg_ms, min_ms, max_ms, errors, "
    "error_pct, active, started, finished, iteration"
)


def expected_summaries(path: Path, zone: str) -> list[dict]:
    """Summariser lines split on whitespace (no regex), times localised with pandas."""
    rows = []
    for line_no, line in enumerate(path.read_text().splitlines(), start=1):
        tokens = line.split()
        kinds = [i for i in range(len(tokens) - 2) if tokens[i] in ("+", "=") and tokens[i + 2] == "in"]
        if not kinds or len(tokens) < kinds[0] + 15:
            continue
        i = kinds[0]
        window = tokens[i + 3]
        if ":" in window:
            h, m, s = window.split(":")
            window_s = int(h) * 3600 + int(m) * 60 + int(s)
        else:
            window_s = int(window.removesuffix("s"))
        rate = tokens[i + 5].removesuffix("/s")
        counts = [int(tokens[i + k]) for k in (16, 18, 20)] if len(tokens) > i + 20 else [None] * 3
        name_start = tokens.index("o.a.j.r.Summariser:") + 1 if "o.a.j.r.Summariser:" in tokens else (
            tokens.index("jmeter.reporters.Summariser:") + 1 if "jmeter.reporters.Summariser:" in tokens else 0
        )
        rows.append(
            {
                "line_no": line_no,
                "logged_at": _local_time(line, zone),
                "summariser": " ".join(tokens[name_start:i]),
                "kind": tokens[i],
                "samples": int(tokens[i + 1]),
                "window_s": window_s,
                "rate_per_s": None if rate.startswith("*") else float(rate.replace(",", ".")),
                "avg_ms": float(tokens[i + 7]),
                "min_ms": float(tokens[i + 9]),
                "max_ms": float(tokens[i + 11]),
                "errors": int(tokens[i + 13]),
                "error_pct": float(tokens[i + 14].strip("(%)").replace(",", ".")),
                "active": counts[0],
                "started": counts[1],
                "finished": counts[2],
            }
        )
    return rows


def _local_time(line: str, zone: str) -> pd.Timestamp | None:
    for text, fmt in ((line[:23], "%Y-%m-%d %H:%M:%S,%f"), (line[:19], "%Y/%m/%d %H:%M:%S")):
        try:
            return pd.Timestamp(datetime.strptime(text, fmt)).tz_localize(zone).tz_convert("UTC")
        except ValueError:
            continue
    return None


def ingest(tmp_path: Path, raw: Path, zone: str, iterations: list[dict], **options):
    name = raw.name
    source = {"kind": "jmeter_log", "host": "loadgen", "path": f"logs/{name}", **options}
    bundle = write_bundle(tmp_path / "bundle", {f"logs/{name}": raw}, [source], iterations, run_id="log", timezone=zone)
    warehouse = tmp_path / "w.duckdb"
    return ingest_bundle(bundle, warehouse, **QUIET), warehouse


def stored(warehouse: Path) -> list[dict]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        frame = con.execute(f"select {COLUMNS} from jmeter_summaries where run_id = 'log' order by line_no").df()
    frame = frame.astype(object)
    return [{k: (None if pd.isna(v) else v) for k, v in row.items()} for row in frame.to_dict("records")]


def rejected(warehouse: Path) -> list[int]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return [row[0] for row in con.execute("select line_no from rejected_lines order by 1").fetchall()]


def with_iterations(rows: list[dict], iterations: list[dict]) -> list[dict]:
    for row in rows:
        at = row["logged_at"]
        inside = [it["index"] for it in iterations
                  if at is not None and pd.Timestamp(it["start"]) <= at < pd.Timestamp(it["end"])]
        row["iteration"] = inside[0] if inside else None
    return rows


def test_jmeter_2_summary_lines_in_local_time(samples, tmp_path):
    raw = samples / "jmeter" / "perfplugin-summary.log"
    iterations = [{"index": 0, "start": "2014-05-22T12:00:00Z", "end": "2014-05-22T13:00:00Z"}]
    report, warehouse = ingest(tmp_path, raw, "Europe/Paris", iterations)
    expected = with_iterations(expected_summaries(raw, "Europe/Paris"), iterations)
    assert len(expected) == 7
    assert stored(warehouse) == expected
    assert stored(warehouse)[0]["logged_at"] == pd.Timestamp("2014-05-22T12:51:00Z")  # 14:51 CEST
    assert (report.sources[0].rows, report.sources[0].rejected) == (7, 0)
    assert rejected(warehouse) == []  # "a plus (+) in it" is just a log line


def test_jmeter_3_log_with_two_summarisers_split_by_iteration(samples, tmp_path):
    raw = samples / "jmeter" / "perfplugin-jmeter.log"
    iterations = [
        {"index": 0, "start": "2017-08-18T15:23:00Z", "end": "2017-08-18T15:24:05Z"},
        {"index": 1, "start": "2017-08-18T15:24:05Z", "end": "2017-08-18T15:25:00Z"},
    ]
    _, warehouse = ingest(tmp_path, raw, "Europe/Paris", iterations)
    expected = with_iterations(expected_summaries(raw, "Europe/Paris"), iterations)
    got = stored(warehouse)
    assert got == expected
    assert [row["iteration"] for row in got] == [0, 0, 1, 1, 1, 1]
    assert {row["summariser"] for row in got} == {"summary", "Generate Summary Results"}
    plus = [row for row in got if row["kind"] == "+" and row["summariser"] == "summary"]
    total = [row for row in got if row["kind"] == "=" and row["summariser"] == "summary"]
    assert sum(row["samples"] for row in plus) == total[0]["samples"] == 1000


def test_decimal_comma_log_with_a_damaged_line_fails_unless_allowed(tmp_path):
    raw = DATA / "jmeter-de.log"
    iterations = [
        {"index": 0, "start": "2023-03-26T00:59:00Z", "end": "2023-03-26T01:00:00Z"},
        {"index": 1, "start": "2023-03-26T01:00:00Z", "end": "2023-03-26T01:01:00Z"},
    ]
    with pytest.raises(IngestError, match=r"logs/jmeter-de\.log: 1 of 6 lines"):
        ingest(tmp_path / "strict", raw, "Europe/Berlin", iterations)
    report, warehouse = ingest(tmp_path, raw, "Europe/Berlin", iterations, max_rejected_pct=50)
    expected = with_iterations(expected_summaries(raw, "Europe/Berlin"), iterations)
    expected = [row for row in expected if row["line_no"] != 12]  # the cut line does not parse
    got = stored(warehouse)
    assert got == expected
    assert [row["line_no"] for row in got] == [6, 8, 9, 10, 11]
    assert got[0]["rate_per_s"] is None  # "******/s": no time elapsed
    assert got[1]["rate_per_s"] == 14.2 and got[1]["error_pct"] == 0.49
    assert got[4]["window_s"] == 100 * 3600 + 59  # JMeter's hours pass 99
    assert [row["iteration"] for row in got] == [0, 0, 1, 1, 1]  # 01:59:59 CET, then 03:00 CEST
    assert rejected(warehouse) == [12]
    assert report.sources[0].rejected == 1


@pytest.mark.parametrize("pinned", [None, 0])
def test_stdout_lines_have_no_time_and_map_only_when_pinned(tmp_path, pinned):
    raw = DATA / "stdout-summary.txt"
    iterations = [{"index": 0, "start": "2023-03-26T00:00:00Z", "end": "2023-03-26T02:00:00Z"}]
    options = {} if pinned is None else {"iteration": pinned}
    report, warehouse = ingest(tmp_path, raw, "UTC", iterations, **options)
    expected = expected_summaries(raw, "UTC")
    for row in expected:
        row["iteration"] = pinned
    assert stored(warehouse) == expected
    assert len(expected) == 3 and all(row["logged_at"] is None for row in expected)
    assert any("3 summariser lines without a time" in note for note in report.sources[0].notes)


def test_reingest_replaces_the_summaries_and_the_key_is_unique(samples, tmp_path):
    raw = samples / "jmeter" / "perfplugin-jmeter.log"
    iterations = [{"index": 0, "start": "2017-08-18T15:00:00Z", "end": "2017-08-18T16:00:00Z"}]
    _, warehouse = ingest(tmp_path, raw, "Europe/Paris", iterations)
    ingest_bundle(tmp_path / "bundle", warehouse, **QUIET)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows, keys = con.execute(
            "select count(*), count(distinct (run_id, path, line_no)) from jmeter_summaries"
        ).fetchone()
    assert rows == keys == len(expected_summaries(raw, "Europe/Paris")) == 6
