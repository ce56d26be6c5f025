"""When a load tool actually applied load: the first sample's start and the last sample's end in its results.

An iteration's window in run.yaml is this window (docs/campaign-format.md, "Iteration windows"), not the
tool's process start and end: a JVM takes seconds to start JMeter before the first call, and k6 a moment,
and those seconds sent nothing. Each reader streams one result file (plain or gzip) without keeping rows:
- JTL CSV (JMeter's default): `timeStamp` is the sample's start in epoch ms (JMeter's default
  `sampleresult.timestamp.start=true`), `elapsed` its ms; the header names the columns.
- JTL XML: every top-level sample (written at column 0) has `ts` (start, epoch ms) and `t` (elapsed ms).
- k6 JSON: an `http_req_duration` point's `time` is the request's end, its value the ms it took.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tasks.bundle.files import open_text

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
XML_SAMPLE = re.compile(r"^<(?![/?!])\S+")
XML_ATTRIBUTE = re.compile(r'\s(ts|t)="(-?\d+)"')


@dataclass(frozen=True)
class LoadWindow:
    """The samples of one or more result files: how many, the first start and the last end (UTC)."""

    calls: int
    first_start: datetime | None = None
    last_end: datetime | None = None

    def __add__(self, other: "LoadWindow") -> "LoadWindow":
        starts = [t for t in (self.first_start, other.first_start) if t is not None]
        ends = [t for t in (self.last_end, other.last_end) if t is not None]
        return LoadWindow(self.calls + other.calls, min(starts, default=None), max(ends, default=None))


class _Span:
    """Running first start and last end, in epoch ms or as datetimes."""

    def __init__(self) -> None:
        self.calls, self.first, self.last = 0, None, None

    def add(self, start, end) -> None:
        self.calls += 1
        self.first = start if self.first is None or start < self.first else self.first
        self.last = end if self.last is None or end > self.last else self.last

    def window(self, to_time=lambda ms: EPOCH + timedelta(milliseconds=ms)) -> LoadWindow:
        if not self.calls:
            return LoadWindow(0)
        return LoadWindow(self.calls, to_time(self.first), to_time(self.last))


def jtl_window(path: Path) -> LoadWindow:
    """The samples of a JMeter result file, CSV (with its header line) or XML."""
    span = _Span()
    with open_text(path) as handle:
        is_xml = handle.read(256).lstrip("\ufeff \t\r\n").startswith("<")
    with open_text(path) as handle:
        if is_xml:
            for line in handle:
                if XML_SAMPLE.match(line):
                    found = dict(XML_ATTRIBUTE.findall(line.split(">", 1)[0]))
                    if "ts" in found and "t" in found:
                        span.add(int(found["ts"]), int(found["ts"]) + int(found["t"]))
            return span.window()
        rows = csv.reader(handle)
        header = [name.strip().lstrip("\ufeff") for name in next(rows, [])]
        if "timeStamp" not in header or "elapsed" not in header:
            return LoadWindow(0)
        at, took = header.index("timeStamp"), header.index("elapsed")
        for row in rows:
            if len(row) > max(at, took) and row[at].isdigit() and row[took].lstrip("-").isdigit():
                span.add(int(row[at]), int(row[at]) + int(row[took]))
    return span.window()


def k6_json_window(path: Path) -> LoadWindow:
    """The requests of a k6 `--out json` file (one `http_req_duration` point each)."""
    span = _Span()
    with open_text(path) as handle:
        for line in handle:
            if '"http_req_duration"' not in line or '"Point"' not in line:
                continue
            data = json.loads(line)["data"]
            end = datetime.fromisoformat(data["time"]).astimezone(timezone.utc)
            span.add(end - timedelta(milliseconds=float(data["value"])), end)
    return span.window(lambda moment: moment)


# the result kinds a load tool writes whose samples give its window
WINDOW_READERS = {"jtl": jtl_window, "k6_json": k6_json_window}
