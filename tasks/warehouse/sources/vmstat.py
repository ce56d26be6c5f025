"""Reader for `vmstat` output (`kind: vmstat`): procps-ng, with or without `-t`, `-w`, `-a` or `-S`.

Values are read by the column names of the header (`gu` exists only in newer procps), never by position.
The header pair repeats (every 21 rows in a file) and a value may overflow its column, so lines are split on
whitespace. With `-t` each row ends with a local date and time, in the zone named by the last word of the
second header line. Without it, data row k (k = 0 for the first) is placed at `started_at + k * interval_s`
(manifest options). The first data row is the average since boot: it is kept, flagged `is_since_boot` and
left out of statistics. Lines that start with an ISO-8601 time (as our monitors may write them) keep that time.
The header does not say `-S`'s unit: the source's `unit` option does (k, K, m, M; default K = KiB).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, Iterable

from tasks.bundle.files import open_text
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources.base import (
    Rejects,
    SourceContext,
    SourceError,
    SourceResult,
    reject,
)
from tasks.warehouse.sources.host_metrics import (
    LocalTime,
    load_samples,
    manifest_zone,
    option_seconds,
    option_time,
    raw_relation,
    split_leading_timestamp,
    year_hint,
)

# procps-ng column names the staging model knows, in its order (memory of `-a`: inact, active).
# `vmstat -S` units in KiB (the default, K, is KiB); -S changes the memory and si/so columns, not bi/bo.
KIB_PER_UNIT = {"k": 1000 / 1024, "K": 1.0, "m": 1_000_000 / 1024, "M": 1024.0}

COLUMNS = ("r", "b", "swpd", "free", "buff", "cache", "inact", "active", "si", "so", "bi", "bo", "in", "cs",
           "us", "sy", "id", "wa", "st", "gu")


@dataclass
class VmstatLines:
    """The data rows of one vmstat file, as columns, plus the lines that could not be read."""

    columns: dict[str, list[Any]] = field(
        default_factory=lambda: {name: [] for name in ("line_no", "sample_no", "written_at", *COLUMNS)})
    rejects: Rejects = field(default_factory=Rejects)  # counted; the first REJECTS_KEPT kept
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.columns["line_no"])


@dataclass
class _Header:
    names: list[str]
    timestamped: bool
    clock: LocalTime | None


def parse_vmstat(lines: Iterable[str], default_zone: tzinfo, explicit_zone: str | None, manifest_zone_name: str,
                 year: int) -> VmstatLines:
    """Split vmstat text into columns by header name; `default_zone` reads ISO prefixes that lack a zone."""
    out = VmstatLines()
    header: _Header | None = None
    first_line_timestamped = False
    sample_no = 0
    ignored: set[str] = set()
    for line_no, line in enumerate(lines, start=1):
        written_at, text = split_leading_timestamp(line.strip(), default_zone)
        tokens = text.split()
        if not tokens:
            continue
        if tokens[0].strip("-").startswith("procs"):
            first_line_timestamped = "timestamp" in text
            continue
        if tokens[:2] == ["r", "b"]:
            names = tokens[:-1] if first_line_timestamped and tokens[-1] not in COLUMNS else tokens
            zone = tokens[-1] if len(names) < len(tokens) else None
            clock = LocalTime(zone, manifest_zone_name, explicit_zone, year) if first_line_timestamped else None
            if clock is not None and clock.note and clock.note not in out.notes:
                out.notes.append(clock.note)
            header = _Header(names, first_line_timestamped, clock)
            ignored |= set(names) - set(COLUMNS)
            continue
        if header is None:
            out.rejects.append((line_no, "data before the vmstat header (the `r b swpd ...` line)", line))
            continue
        this_sample, sample_no = sample_no, sample_no + 1  # every data line takes its interval, read or not
        reason, values, stamped = _read_row(tokens, header)
        if reason:
            out.rejects.append((line_no, reason, line))
            continue
        out.columns["line_no"].append(line_no)
        out.columns["sample_no"].append(this_sample)
        out.columns["written_at"].append(written_at or stamped)
        for name in COLUMNS:
            out.columns[name].append(values.get(name))
    if ignored:
        out.notes.append(f"columns not loaded: {', '.join(sorted(ignored))}")
    return out


def _read_row(tokens: list[str], header: _Header) -> tuple[str | None, dict[str, float], datetime | None]:
    expected = len(header.names) + (2 if header.timestamped else 0)
    if len(tokens) != expected:
        what = " plus date and time" if header.timestamped else ""
        return f"expected {len(header.names)} values{what} ({' '.join(header.names)}), found {len(tokens)}", {}, None
    values = {}
    for name, token in zip(header.names, tokens):
        try:
            values[name] = float(token)
        except ValueError:
            return f"{name}: not a number: {token!r}", {}, None
    stamped = None
    if header.timestamped:
        try:  # YYYY-MM-DD HH:MM:SS; fromisoformat is many times faster than strptime
            local = datetime.fromisoformat(f"{tokens[-2]}T{tokens[-1]}")
            if len(tokens[-2]) != 10 or len(tokens[-1]) != 8:
                raise ValueError
        except ValueError:
            return f"not a date and time: {tokens[-2]} {tokens[-1]!r}", {}, None
        stamped = header.clock.to_utc(local)
    return None, values, stamped


def _time_basis(parsed: VmstatLines, started_at, interval_s, ctx: SourceContext) -> str:
    stamped = sum(1 for value in parsed.columns["written_at"] if value is not None)
    if stamped == parsed.rows:
        return "own timestamps"
    if started_at is None or interval_s is None:
        raise SourceError(
            f"{ctx.field}: {parsed.rows - stamped} vmstat rows carry no time (written without -t): set "
            "`started_at` (wall-clock time of the first row) and `interval_s` on the source")
    return "started_at + k * interval_s" if stamped == 0 else "own timestamps / started_at + k * interval_s"


def read(ctx: SourceContext) -> SourceResult:
    """Load one vmstat file into host_sample_facts; unreadable lines go to rejected_lines."""
    explicit = ctx.option("timezone")
    with open_text(ctx.file) as handle:
        parsed = parse_vmstat(handle, manifest_zone(ctx), explicit, ctx.manifest.timezone, year_hint(ctx))
    started_at, interval_s = option_time(ctx, "started_at"), option_seconds(ctx, "interval_s")
    basis = _time_basis(parsed, started_at, interval_s, ctx)
    unit = ctx.option("unit", "K")
    if unit not in KIB_PER_UNIT:
        raise SourceError(f"{ctx.field}.unit: {unit!r}: expected vmstat's -S letter, one of k, K, m, M")
    types = {"line_no": "BIGINT", "sample_no": "BIGINT", "written_at": "TIMESTAMPTZ"}
    raw = raw_relation(ctx.con, {name: (types.get(name, "DOUBLE"), values) for name, values in parsed.columns.items()})
    raw.create_view("raw_vmstat", replace=True)
    build_model(ctx.con, "stg_vmstat__samples",
                {"started_at": started_at, "interval_s": interval_s, "kib_per_unit": KIB_PER_UNIT[unit]})
    rows, notes = load_samples(ctx, ctx.con.table("stg_vmstat__samples"), basis)
    drop_model(ctx.con, "stg_vmstat__samples")
    ctx.con.execute("drop view raw_vmstat")
    reject(ctx, parsed.rejects)
    return SourceResult(rows=rows, rejected=len(parsed.rejects), notes=tuple(parsed.notes + notes))
