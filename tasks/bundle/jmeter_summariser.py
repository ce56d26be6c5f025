"""JMeter's summariser lines (`summary +   1003 in 00:00:13 =   76.8/s Avg: ...`) as numbers.

The load tool reads them to judge a step, the warehouse to load them (tasks/warehouse/sources/jmeter_log.py
says which forms JMeter writes).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from tasks.bundle.files import open_text

TIME_PREFIX = re.compile(r"^(\d{4})[-/](\d{2})[-/](\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[,.](\d{1,6}))?")
SUMMARY_LIKE = re.compile(r"(?:^|\s)[+=]\s+\d+\s+in\s+(?:\d+:\d{2}:\d{2}|\d+s?)\s+=")
SUMMARY = re.compile(
    r"(?:^|\s)(?P<kind>[+=])\s+(?P<samples>\d+)\s+in\s+(?P<window>\d+:\d{2}:\d{2}|\d+s?)\s+="
    r"\s+(?P<rate>\d+(?:[.,]\d+)?|\*+)/s"
    r"\s+Avg:\s+(?P<avg>-?\d+)\s+Min:\s+(?P<min>-?\d+)\s+Max:\s+(?P<max>-?\d+)"
    r"\s+Err:\s+(?P<errors>\d+)\s+\((?P<error_pct>\d+(?:[.,]\d+)?)\s*%\)"
    r"(?:\s+Active:\s+(?P<active>\d+)\s+Started:\s+(?P<started>\d+)\s+Finished:\s+(?P<finished>\d+))?"
)
# JMeter's own test start, logged when the test starts (the summariser's clock and a throughput timer's
# schedule start there): `... INFO o.a.j.JMeter: Running test (1796335033695)`, epoch ms
TEST_START = re.compile(r"\bRunning test \((\d{10,})\)")
NUMBER_COLUMNS = ("samples", "window_s", "rate_per_s", "avg_ms", "min_ms", "max_ms", "errors", "error_pct")
COUNT_COLUMNS = ("active", "started", "finished")


def parse_lines(path) -> tuple[list[dict], list[tuple[int, str, str]]]:
    """Summariser rows (fields as JMeter printed them, numbers converted) and rejected lines of a log file."""
    rows, rejects = [], []
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, start=1):
            if not SUMMARY_LIKE.search(line):
                continue
            match = SUMMARY.search(line)
            if match is None:
                rejects.append((line_no, "summariser line that does not parse", line.rstrip("\r\n")))
                continue
            rows.append(
                dict(line_no=line_no, logged_local=_logged_at(line), summariser=_name(line, match), **_fields(match))
            )
    return rows, rejects


def test_start(path) -> datetime | None:
    """When JMeter started the test (UTC), from its log's `Running test (epoch ms)` line; None without one."""
    with open_text(path) as handle:
        for line in handle:
            if found := TEST_START.search(line):
                return datetime.fromtimestamp(int(found[1]) / 1000, timezone.utc)
    return None


def _name(line: str, match: re.Match) -> str:
    """The summariser's name: a log may hold several (each counts every sample), so keep them apart."""
    before = line[: match.start()].strip()
    return re.split(r"Summariser:\s*|:\s+", before)[-1] if before else ""


def _logged_at(line: str) -> datetime | None:
    prefix = TIME_PREFIX.match(line)
    if prefix is None:
        return None
    year, month, day, hour, minute, second, fraction = prefix.groups()
    micros = int((fraction or "0").ljust(6, "0"))
    return datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros)


def _fields(match: re.Match) -> dict:
    found = match.groupdict()
    return {
        "kind": found["kind"],
        "samples": int(found["samples"]),
        "window_s": _seconds(found["window"]),
        "rate_per_s": None if found["rate"].startswith("*") else _decimal(found["rate"]),
        "avg_ms": float(found["avg"]),
        "min_ms": float(found["min"]),
        "max_ms": float(found["max"]),
        "errors": int(found["errors"]),
        "error_pct": _decimal(found["error_pct"]),
        **{name: None if found[name] is None else int(found[name]) for name in COUNT_COLUMNS},
    }


def _seconds(window: str) -> int:
    """`00:00:13` (JMeter 3+, hours may pass 99) or `43s` / `43` (JMeter <= 2.13) as seconds."""
    if ":" in window:
        hours, minutes, seconds = (int(part) for part in window.split(":"))
        return hours * 3600 + minutes * 60 + seconds
    return int(window.rstrip("s"))


def _decimal(text: str) -> float:
    """A number printed by the JVM's locale: `41,1` and `41.1` are the same."""
    return float(text.replace(",", "."))
