"""Access logs that no space-separated pattern describes (Cloud Foundry's gorouter, key:value lines).

The source gives a regular expression with named groups; each line is matched in Python and the fields
land in the same raw columns the delimited reader produces, so the same staging model parses them.
Slower than the delimited path and held in memory, so it is the fallback for odd formats.

Groups: `time` (required), `status` (required), `request` or `method` + `url`, `bytes`, `elapsed`.
`time` is ISO-8601 (with a zone, or in the manifest's zone) or `time_format` (strptime, e.g. the
Common Log Format `%d/%b/%Y:%H:%M:%S %z`).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pandas as pd
import re2

from tasks.bundle.files import open_text
from tasks.warehouse.sources.base import Rejects, SourceContext, SourceError, reject

PRESET_REGEXES = {
    # Cloud Foundry gorouter RTR lines: [time] "request" status bytes_received bytes_sent ... response_time:s
    "cloudfoundry_gorouter": (
        r'^\s*\S+ \[RTR/\d+\] OUT \S+ - \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" (?P<status>\d{3}) \d+ '
        r"(?P<bytes>\d+) .*\bresponse_time:(?P<elapsed>[0-9.]+)",
        "s",
    ),
}
_FRACTION = re.compile(r"(\.\d{6})\d+")


def regex_for(ctx: SourceContext):
    """The compiled regex of the source (or its preset) and the duration unit the preset implies.

    Compiled with RE2 (google-re2): matching takes time linear in the line whatever the pattern, so a
    bundle's regex with catastrophic backtracking (`(a+)+b`) cannot hold the writer lock for ever. RE2 has
    no backreferences or lookarounds; a pattern that needs them is refused with RE2's reason.
    """
    text, unit = PRESET_REGEXES.get(ctx.option("preset"), (ctx.option("regex"), None))
    if not isinstance(text, str):
        raise SourceError(f"{ctx.field}.regex: expected a regular expression as text, got {type(text).__name__}")
    try:
        compiled = re2.compile(text)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
        raise SourceError(f"{ctx.field}.regex: not a regular expression RE2 accepts (no backreferences or "
                          f"lookarounds): {reason}") from None
    missing = {"time", "status"} - compiled.groupindex.keys()
    if missing:
        raise SourceError(f"{ctx.field}.regex: needs the named groups {', '.join(sorted(missing))}")
    return compiled, unit


def _time_parser(ctx: SourceContext):
    fmt = ctx.option("time_format")
    zone = ZoneInfo(ctx.manifest.timezone)
    cache: dict[str, datetime] = {}

    def parse(text: str) -> datetime:
        if text not in cache:
            moment = datetime.strptime(text, fmt) if fmt else datetime.fromisoformat(_FRACTION.sub(r"\1", text))
            moment = moment if moment.tzinfo else moment.replace(tzinfo=zone)
            cache[text] = moment.astimezone(timezone.utc).replace(tzinfo=None)
        return cache[text]

    return parse


def _frame(rows: list[tuple]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["ts_written", "request", "method", "url", "status", "bytes", "duration"])
    frame["ts_written"] = pd.to_datetime(frame["ts_written"])
    frame.insert(1, "zone_text", "+0000")  # times are converted to UTC here
    for column, kind in (("status", "Int32"), ("bytes", "Int64"), ("duration", "Float64")):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(kind)
    return frame


def read_raw_frame(ctx: SourceContext, compiled) -> tuple[pd.DataFrame, int]:
    """Matched lines as raw columns; unmatched lines go to rejected_lines with their number."""
    parse_time = _time_parser(ctx)
    groups = compiled.groupindex
    rows, rejected = [], Rejects()
    with open_text(ctx.file) as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            match = compiled.search(line)
            if not match:
                rejected.append((line_no, "does not match the source's regex", line))
                continue
            try:
                moment = parse_time(match.group("time"))
                status = int(match.group("status"))
            except ValueError as exc:
                rejected.append((line_no, f"time or status: {exc}", line))
                continue
            optional = [match.group(name) if name in groups else None for name in ("request", "method", "url", "bytes", "elapsed")]
            rows.append((moment, *optional[:3], status, *optional[3:]))
    reject(ctx, rejected)
    return _frame(rows), len(rejected)
