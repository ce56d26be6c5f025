"""Reader for `jstat -gc` output (`kind: jstat`), JDK 8 and JDK 11+ (`CGC CGCT`), with or without `-t`.

Values are read by header name; the header may repeat (`-h`). `-` is a missing value and a decimal comma
(a JVM in a non-English locale) is a decimal point. A line that starts with an ISO-8601 time (as our
monitors write them) carries its own time. Otherwise `-t`'s first column (seconds since JVM start) is
placed from the manifest: `first_sample_at` (wall-clock time of the first line) or `jvm_started_at`; a
file without `-t` needs `started_at` and `interval_s`, like vmstat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo
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
    load_samples,
    manifest_zone,
    option_seconds,
    option_time,
    parse_number,
    raw_relation,
    split_leading_timestamp,
)

# `jstat -gc` columns the staging model knows (lower case), in its order.
COLUMNS = ("s0c", "s1c", "s0u", "s1u", "ec", "eu", "oc", "ou", "mc", "mu", "ccsc", "ccsu",
           "ygc", "ygct", "fgc", "fgct", "cgc", "cgct", "gct")
REQUIRED = ("ou", "oc", "ygc", "gct")


@dataclass
class JstatLines:
    """The data lines of one jstat file, as columns, plus the lines that could not be read."""

    columns: dict[str, list[Any]] = field(
        default_factory=lambda: {name: [] for name in ("line_no", "sample_no", "written_at", "uptime_s", *COLUMNS)})
    rejects: Rejects = field(default_factory=Rejects)  # counted; the first REJECTS_KEPT kept
    notes: list[str] = field(default_factory=list)
    has_uptime: bool = False

    @property
    def rows(self) -> int:
        return len(self.columns["line_no"])


def parse_jstat(lines: Iterable[str], default_zone: tzinfo) -> JstatLines:
    """Split `jstat -gc` text into columns by header name; `default_zone` reads ISO prefixes that lack one."""
    out = JstatLines()
    names: list[str] | None = None
    ignored: set[str] = set()
    sample_no = 0
    last_uptime: float | None = None
    for line_no, line in enumerate(lines, start=1):
        written_at, text = split_leading_timestamp(line.strip(), default_zone)
        tokens = text.split()
        if not tokens:
            continue
        if tokens[0] in ("Timestamp", "S0C"):
            names = [token.lower() for token in tokens]
            missing = [name.upper() for name in REQUIRED if name not in names]
            if missing:
                raise SourceError(f"line {line_no}: not `jstat -gc` output (no {', '.join(missing)} in {text!r})")
            out.has_uptime = out.has_uptime or names[0] == "timestamp"
            ignored |= set(names) - set(COLUMNS) - {"timestamp"}
            continue
        if names is None:
            out.rejects.append((line_no, "data before the jstat header (the `Timestamp S0C ...` line)", line))
            continue
        this_sample, sample_no = sample_no, sample_no + 1
        if len(tokens) != len(names):
            reason = f"expected {len(names)} values ({' '.join(names)}), found {len(tokens)}"
            out.rejects.append((line_no, reason, line))
            continue
        try:
            values = {name: parse_number(token) for name, token in zip(names, tokens)}
        except ValueError:
            bad = next(token for token in tokens if not _is_number(token))
            out.rejects.append((line_no, f"not a number: {bad!r}", line))
            continue
        uptime = values.get("timestamp")
        if written_at is None and uptime is not None and last_uptime is not None and uptime <= last_uptime:
            out.rejects.append((line_no, f"JVM uptime {uptime:g} s is not after the previous line's {last_uptime:g} s "
                                "(a restarted JVM or lines out of order): its time cannot be placed", line))
            continue
        last_uptime = uptime if uptime is not None else last_uptime
        out.columns["line_no"].append(line_no)
        out.columns["sample_no"].append(this_sample)
        out.columns["written_at"].append(written_at)
        out.columns["uptime_s"].append(uptime)
        for name in COLUMNS:
            out.columns[name].append(values.get(name))
    if ignored:
        out.notes.append(f"columns not loaded: {', '.join(sorted(ignored))}")
    return out


def _is_number(token: str) -> bool:
    try:
        parse_number(token)
    except ValueError:
        return False
    return True


def _time_basis(ctx: SourceContext, parsed: JstatLines, options: dict[str, Any]) -> str:
    untimed = sum(1 for value in parsed.columns["written_at"] if value is None)
    if untimed == 0:
        return "own timestamps"
    if parsed.has_uptime and options["first_sample_at"] is not None:
        basis = "first_sample_at + uptime"
    elif parsed.has_uptime and options["jvm_started_at"] is not None:
        basis = "jvm_started_at + uptime"
    elif options["started_at"] is not None and options["interval_s"] is not None:
        basis = "started_at + k * interval_s"
    else:
        raise SourceError(
            f"{ctx.field}: {untimed} jstat lines carry no time: with `-t` set `first_sample_at` (wall-clock time "
            "of the first line) or `jvm_started_at`; without `-t` set `started_at` and `interval_s`")
    return basis if untimed == parsed.rows else f"own timestamps / {basis}"


def read(ctx: SourceContext) -> SourceResult:
    """Load one `jstat -gc` file into host_sample_facts; unreadable lines go to rejected_lines."""
    with open_text(ctx.file) as handle:
        try:
            parsed = parse_jstat(handle, manifest_zone(ctx))
        except SourceError as exc:
            raise SourceError(f"{ctx.field}: {exc}") from None
    options = {
        "first_sample_at": option_time(ctx, "first_sample_at"),
        "jvm_started_at": option_time(ctx, "jvm_started_at"),
        "started_at": option_time(ctx, "started_at"),
        "interval_s": option_seconds(ctx, "interval_s"),
    }
    basis = _time_basis(ctx, parsed, options)
    if basis.endswith("first_sample_at + uptime"):  # only one way to place the lines without a time
        options["jvm_started_at"] = None
    types = {"line_no": "BIGINT", "sample_no": "BIGINT", "written_at": "TIMESTAMPTZ"}
    raw = raw_relation(ctx.con, {name: (types.get(name, "DOUBLE"), values) for name, values in parsed.columns.items()})
    raw.create_view("raw_jstat", replace=True)
    build_model(ctx.con, "stg_jstat__samples", options)
    rows, notes = load_samples(ctx, ctx.con.table("stg_jstat__samples"), basis)
    drop_model(ctx.con, "stg_jstat__samples")
    ctx.con.execute("drop view raw_jstat")
    reject(ctx, parsed.rejects)
    return SourceResult(rows=rows, rejected=len(parsed.rejects), notes=tuple(parsed.notes + notes))
