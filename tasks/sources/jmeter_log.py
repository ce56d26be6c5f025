"""Reader for JMeter's summariser lines (`kind: jmeter_log`: a jmeter.log, or JMeter's stdout).

JMeter prints, every summariser interval, a `+` line for the last window and a `=` line for the running
total, e.g. `summary +   1003 in 00:00:13 =   76.8/s Avg:   148 Min:   123 Max:   396 Err:     0 (0.00%)
Active: 16 Started: 16 Finished: 0`. JMeter <= 2.13 wrote the window as `in    43s`; the numbers follow
the JVM's locale (`41,1/s`); the summariser's name (`summary`, `Generate Summary Results`...) is free.
The log line's own time prefix (`2017-08-18 17:23:43,981` or `2014/05/22 14:50:15`) is local time in the
manifest's zone; stdout lines have none and get no time (and so no iteration unless the source is pinned).
Every other line is ignored; a line that starts like a summariser line but does not parse is rejected.
Several summarisers may write to one log: each line keeps its summariser's name.
The file is small, so it is parsed in Python; the rows go through `sql/staging/stg_jmeter__summaries.sql`.
"""

from __future__ import annotations

import re
from datetime import datetime

import pandas as pd

from tasks.sources.base import SourceContext, SourceResult, open_text, reject, set_load_context
from tasks.sqlmodels import model_sql

TIME_PREFIX = re.compile(r"^(\d{4})[-/](\d{2})[-/](\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[,.](\d{1,6}))?")
SUMMARY_LIKE = re.compile(r"(?:^|\s)[+=]\s+\d+\s+in\s+(?:\d+:\d{2}:\d{2}|\d+s?)\s+=")
SUMMARY = re.compile(
    r"(?:^|\s)(?P<kind>[+=])\s+(?P<samples>\d+)\s+in\s+(?P<window>\d+:\d{2}:\d{2}|\d+s?)\s+="
    r"\s+(?P<rate>\d+(?:[.,]\d+)?|\*+)/s"
    r"\s+Avg:\s+(?P<avg>-?\d+)\s+Min:\s+(?P<min>-?\d+)\s+Max:\s+(?P<max>-?\d+)"
    r"\s+Err:\s+(?P<errors>\d+)\s+\((?P<error_pct>\d+(?:[.,]\d+)?)\s*%\)"
    r"(?:\s+Active:\s+(?P<active>\d+)\s+Started:\s+(?P<started>\d+)\s+Finished:\s+(?P<finished>\d+))?"
)
NUMBER_COLUMNS = ("samples", "window_s", "rate_per_s", "avg_ms", "min_ms", "max_ms", "errors", "error_pct")
COUNT_COLUMNS = ("active", "started", "finished")


def read(ctx: SourceContext) -> SourceResult:
    """Load the summariser lines of one log into jmeter_summaries; damaged summariser lines are rejected."""
    rows, rejects = parse_lines(ctx.file)
    reject(ctx, rejects)
    if not rows:
        return SourceResult(rejected=len(rejects), notes=(f"{ctx.source.path}: no summariser lines",))
    ctx.con.from_df(_frame(rows)).create_view("raw_jmeter_summaries", replace=True)
    set_load_context(ctx, zone=ctx.manifest.timezone, host=ctx.source.host, path=ctx.source.path)
    ctx.con.execute(model_sql("staging/stg_jmeter__summaries"))
    ctx.con.execute(model_sql("intermediate/int_jmeter_summaries_by_iteration"))
    ctx.con.execute("drop view stg_jmeter__summaries")
    ctx.con.execute("drop view raw_jmeter_summaries")
    untimed = sum(1 for row in rows if row["logged_local"] is None)
    notes = (f"{ctx.source.path}: {untimed} summariser lines without a time prefix (stdout?)",) if untimed else ()
    return SourceResult(rows=len(rows), rejected=len(rejects), notes=notes)


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


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "line_no": pd.Series([row["line_no"] for row in rows], dtype="int64"),
            "logged_local": pd.Series([row["logged_local"] for row in rows], dtype="datetime64[us]"),
            "summariser": pd.Series([row["summariser"] for row in rows], dtype=object),
            "kind": pd.Series([row["kind"] for row in rows], dtype=object),
        }
    )
    for name in NUMBER_COLUMNS:
        frame[name] = pd.Series([row[name] for row in rows], dtype="float64")
    for name in COUNT_COLUMNS:
        frame[name] = pd.Series([row[name] for row in rows], dtype="Int64")
    return frame
