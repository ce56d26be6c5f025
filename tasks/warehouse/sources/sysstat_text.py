"""The text that sysstat's `sar` and `pidstat` print, split into rows by the column names of their headers.

Both tools open with `Linux 6.1.0 (host)  2026-12-03  _x86_64_  (2 CPU)`: the date of the first sample
(ISO with S_TIME_FORMAT=ISO, else the C locale's 12/03/26 or 12/03/2026) and the host's CPU count. Every
other line starts with a time of day (`12:12:25`, or `12:12:25 PM` in a 12-hour locale; older pidstat -h
prints seconds since the epoch): a header line names its columns (`IFACE rxpck/s ...`, pidstat -h's
`# Time UID PID ...`), a data line holds one value per column. The date moves on when a data line's time
goes back by more than 12 hours (midnight). `Average:` lines (sar's summary at exit) are not samples.
Times are wall-clock times of the zone the tool ran in (our monitors run them with TZ=UTC).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Iterable, Iterator

from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources.base import Rejects, SourceContext, reject
from tasks.warehouse.sources.host_metrics import load_samples, parse_number, raw_relation

_FIRST_LINE = re.compile(
    r"^Linux\s.*?\s(?P<date>\d{4}-\d{2}-\d{2}|\d{2}/\d{2}/\d{2}(?:\d{2})?)\s.*?(?:\((?P<cpus>\d+) CPU\))?\s*$")
_TIME = re.compile(r"^\d{2}:\d{2}:\d{2}$")
_EPOCH = re.compile(r"^\d{9,11}$")
_NOT_SAMPLES = ("Average:", "Summary:")


@dataclass
class SysstatRow:
    """One data line: its block (the header's first column name), time (UTC) and text by column name."""

    line_no: int
    block: str
    sampled_at: datetime
    values: dict[str, str]
    text: str  # the line as written, for a rejected row's excerpt


@dataclass
class SysstatText:
    """What reading one file learns besides its rows: the host's CPU count, and the lines that could not be read."""

    cpu_count: int | None = None
    rejects: Rejects = field(default_factory=Rejects)


def _read_date(text: str) -> date:
    if "-" in text:
        return date.fromisoformat(text)
    month, day, year = (int(part) for part in text.split("/"))
    return date(year + 2000 if year < 100 else year, month, day)


def _time_of_day(tokens: list[str]) -> tuple[time | None, int]:
    """The time a line starts with and how many tokens it takes; (None, 0) when it starts with none."""
    if not tokens or not _TIME.match(tokens[0]):
        return None, 0
    hours, minutes, seconds = (int(part) for part in tokens[0].split(":"))
    taken = 1
    if len(tokens) > 1 and tokens[1] in ("AM", "PM"):
        hours, taken = hours % 12 + (12 if tokens[1] == "PM" else 0), 2
    if hours > 23 or minutes > 59 or seconds > 60:
        return None, 0
    return time(hours, minutes, min(seconds, 59)), taken


def _is_number(token: str) -> bool:
    try:
        parse_number(token)
    except ValueError:
        return False
    return token != "-"


class _Clock:
    """Turns times of day into UTC: the header's date, moved on at midnight, read in `zone`."""

    def __init__(self, zone: tzinfo):
        self.zone = zone
        self.day: date | None = None
        self.last: time | None = None

    def at(self, moment: time) -> datetime | None:
        if self.day is None:
            return None
        if self.last is not None and _seconds(self.last) - _seconds(moment) > 12 * 3600:
            self.day += timedelta(days=1)
        self.last = moment
        return datetime.combine(self.day, moment).replace(tzinfo=self.zone).astimezone(timezone.utc)


def _seconds(moment: time) -> int:
    return moment.hour * 3600 + moment.minute * 60 + moment.second


def parse_sysstat(lines: Iterable[str], zone: tzinfo, tool: str, out: SysstatText) -> Iterator[SysstatRow]:
    """The rows of sar or pidstat text (`tool` names it in reasons) by header names, one at a time (a soak's
    file is long); the CPU count and rejected lines go to `out`."""
    clock = _Clock(zone)
    header: list[str] | None = None
    for line_no, line in enumerate(lines, start=1):
        tokens = line.split()
        if not tokens or tokens[0] in _NOT_SAMPLES:
            continue
        if tokens[0] == "Linux":
            match = _FIRST_LINE.match(line.strip())
            if not match:
                out.rejects.append((line_no, f"a {tool} first line without a date (`Linux ... 2026-12-03 ...`)", line))
                continue
            clock.day, clock.last = _read_date(match["date"]), None
            out.cpu_count = int(match["cpus"]) if match["cpus"] else out.cpu_count
            continue
        if tokens[:2] == ["#", "Time"]:  # pidstat -h
            header = tokens[2:]
            continue
        if _EPOCH.match(tokens[0]):  # pidstat -h before sysstat 11: seconds since the epoch
            moment, taken = datetime.fromtimestamp(int(tokens[0]), timezone.utc), 1
        else:
            of_day, taken = _time_of_day(tokens)
            if of_day is None:
                out.rejects.append((line_no, f"expected a {tool} line that starts with a time (HH:MM:SS)", line))
                continue
            rest = tokens[taken:]
            if rest and not any(_is_number(token) for token in rest):
                header = rest
                continue
            moment = clock.at(of_day)
            if moment is None:
                out.rejects.append((line_no, f"a {tool} sample before the first line that gives the date", line))
                continue
        reason, values = _values(tokens[taken:], header, tool)
        if reason:
            out.rejects.append((line_no, reason, line))
            continue
        yield SysstatRow(line_no, header[0], moment, values, line)


def _values(tokens: list[str], header: list[str] | None, tool: str) -> tuple[str | None, dict[str, str]]:
    if header is None:
        return f"a {tool} sample before any header line naming its columns", {}
    if header[-1] == "Command" and len(tokens) > len(header):  # a process name may hold spaces
        tokens = tokens[:len(header) - 1] + [" ".join(tokens[len(header) - 1:])]
    if len(tokens) != len(header):
        return f"expected {len(header)} values ({' '.join(header)}), found {len(tokens)}", {}
    return None, dict(zip(header, tokens))


def number(row: SysstatRow, name: str, scale: float = 1.0) -> float | None:
    """A column's value as a number times `scale`, None when the column is absent or `-`; raises ValueError."""
    token = row.values.get(name)
    value = None if token is None else parse_number(token)
    return None if value is None else value * scale


def load_sysstat(ctx: SourceContext, tool: str, parsed: SysstatText, columns: dict[str, list],
                 text_columns: dict[str, str]) -> tuple[int, list[str]]:
    """Columns (numbers DOUBLE unless `text_columns` types them) through `stg_<tool>__samples` into
    host_sample_facts, and the rejected lines aside; (rows, notes). `tool` is `sar` or `pidstat`."""
    types = {"line_no": "BIGINT", "sampled_at": "TIMESTAMPTZ", **text_columns}
    raw = raw_relation(ctx.con, {name: (types.get(name, "DOUBLE"), values) for name, values in columns.items()})
    raw.create_view(f"raw_{tool}", replace=True)
    build_model(ctx.con, f"stg_{tool}__samples", {"cpu_count": parsed.cpu_count})
    rows, notes = load_samples(ctx, ctx.con.table(f"stg_{tool}__samples"), "own timestamps")
    drop_model(ctx.con, f"stg_{tool}__samples")
    ctx.con.execute(f"drop view raw_{tool}")
    reject(ctx, parsed.rejects)
    return rows, notes
