"""What the host-metric readers (vmstat, jstat, docker_stats) share: times, numbers, and the road to the warehouse.

A reader turns its text into columns of raw values (one list per column, Python values, `None` for missing),
`raw_relation` hands them to DuckDB as a relation, the kind's staging model renames and casts them and places
samples without their own time, and `load_samples` puts every sample in its iteration and appends it to
`host_sample_facts` (`sql/base/host_sample_facts.sql`).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import duckdb

from tasks.warehouse.models import build_model
from tasks.warehouse.sources.base import SourceContext, SourceError, set_load_context

# `2026-12-02T09:46:42.243Z`, `2026-12-02 09:46:42`, `date --iso-8601=ns` (`...42,123456789+00:00`).
_ISO = (
    r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}:\d{2})(?:[.,](?P<fraction>\d+))?"
    r"(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)?"
)
ISO_LINE = re.compile(rf"^{_ISO}$")
ISO_PREFIX = re.compile(rf"^{_ISO}(?=\s)")
_NUMERIC_ZONE = re.compile(r"^[+-]\d{2}(?::?\d{2})?$")
UTC_NAMES = ("UTC", "GMT", "UCT", "UT", "Z", "ZULU")
# Offsets (minutes east of UTC) of abbreviations `strftime("%Z")` prints, for when the manifest's zone does not
# use them itself. Ambiguous ones (IST, CST, BST) are read the first way listed here unless the manifest's zone
# says otherwise (a manifest in Asia/Kolkata makes IST +05:30, one in Europe/Dublin makes it +01:00).
COMMON_ABBREVIATIONS = {
    "WET": 0, "WEST": 60, "BST": 60, "CET": 60, "CEST": 120, "MET": 60, "MEST": 120, "EET": 120, "EEST": 180,
    "MSK": 180, "IST": 330, "PKT": 300, "ICT": 420, "WIB": 420, "HKT": 480, "SGT": 480, "AWST": 480,
    "JST": 540, "KST": 540, "ACST": 570, "ACDT": 630, "AEST": 600, "AEDT": 660, "NZST": 720, "NZDT": 780,
    "HST": -600, "AKST": -540, "AKDT": -480, "PST": -480, "PDT": -420, "MST": -420, "MDT": -360,
    "CST": -360, "CDT": -300, "EST": -300, "EDT": -240, "AST": -240, "ADT": -180, "NST": -210, "NDT": -150,
}


def parse_iso(text: str, default_zone: tzinfo) -> datetime | None:
    """An ISO-8601 time as UTC; a time without a zone is read in `default_zone`. None if it is not one."""
    match = ISO_LINE.match(text.strip())
    return _from_match(match, default_zone) if match else None


def split_leading_timestamp(line: str, default_zone: tzinfo) -> tuple[datetime | None, str]:
    """(time, rest) for a line that starts with an ISO-8601 time as our monitors write it, else (None, line)."""
    match = ISO_PREFIX.match(line)
    if not match:
        return None, line
    return _from_match(match, default_zone), line[match.end():].lstrip()


def _from_match(match: re.Match, default_zone: tzinfo) -> datetime | None:
    fraction = (match["fraction"] or "0")[:6].ljust(6, "0")
    try:
        moment = datetime.fromisoformat(f"{match['date']}T{match['time']}.{fraction}")
    except ValueError:
        return None
    zone = match["zone"]
    if zone is None:
        return moment.replace(tzinfo=default_zone).astimezone(timezone.utc)
    offset = timedelta(0) if zone == "Z" else _numeric_offset(zone)
    return (moment - offset).replace(tzinfo=timezone.utc)


def _numeric_offset(text: str) -> timedelta:
    digits = text[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:4] or 0)
    return timedelta(minutes=-minutes if text[0] == "-" else minutes)


def parse_number(token: str) -> float | None:
    """A number as the JVM or procps prints it: `-` is missing, a decimal comma is a decimal point."""
    if token == "-":
        return None
    return float(token.replace(",", "."))


@cache
def _zone_abbreviations(zone: ZoneInfo, year: int) -> dict[str, timedelta]:
    """The abbreviations a zone used around `year`, with their offsets (probed twice a day)."""
    found: dict[str, timedelta] = {}
    moment = datetime(year - 1, 1, 1, tzinfo=timezone.utc)
    while moment.year <= year + 1:
        local = moment.astimezone(zone)
        found.setdefault(local.tzname(), local.utcoffset())
        moment += timedelta(hours=12)
    return found


class LocalTime:
    """Turns wall-clock times written in a named zone (vmstat `-t`: `UTC`, `CET`, `CEST`...) into UTC.

    An explicit `timezone` option on the source wins. An abbreviation the manifest's zone uses itself
    (`CET` for Europe/Berlin) means that zone with its daylight-saving rules: vmstat prints the name only in
    its header, so rows after a switch to summer time are summer wall-clock times under a `CET` header.
    Otherwise the abbreviation names a fixed offset: UTC/GMT, a numeric one (`+03`) or a common one; an
    unknown name falls back to the manifest's zone and says so in `note`. Rows come in time order, so in
    the hour repeated when clocks go back, a time that would go backwards is read as the second one.
    """

    def __init__(self, abbreviation: str | None, manifest_zone: str, explicit_zone: str | None, year: int):
        self.note: str | None = None
        self._zone: tzinfo
        self._last: datetime | None = None
        if explicit_zone:
            self._zone = ZoneInfo(explicit_zone)
            return
        name = (abbreviation or "").strip()
        zone = ZoneInfo(manifest_zone)
        if name.upper() not in UTC_NAMES and name in _zone_abbreviations(zone, year):
            self._zone = zone
            return
        offset = self._offset_of(name)
        if offset is None:
            self._zone = zone
            self.note = (f"time zone {name or '(none)'!r} is not one we can map: local times read in the manifest "
                         f"timezone {manifest_zone} (set `timezone:` on the source to choose)")
        else:
            self._zone = timezone(offset)

    @staticmethod
    def _offset_of(name: str) -> timedelta | None:
        if name.upper() in UTC_NAMES:
            return timedelta(0)
        if _NUMERIC_ZONE.match(name):
            return _numeric_offset(name)
        minutes = COMMON_ABBREVIATIONS.get(name.upper())
        return None if minutes is None else timedelta(minutes=minutes)

    def to_utc(self, local: datetime) -> datetime:
        """A naive wall-clock time of this zone, as an aware UTC time (rows in time order)."""
        moment = local.replace(tzinfo=self._zone).astimezone(timezone.utc)
        if self._last is not None and moment < self._last:
            second = local.replace(tzinfo=self._zone, fold=1).astimezone(timezone.utc)
            moment = second if second >= self._last else moment
        self._last = moment
        return moment


def manifest_zone(ctx: SourceContext) -> ZoneInfo:
    """The zone for times written without one: the source's `timezone` option, else the manifest's."""
    name = ctx.option("timezone") or ctx.manifest.timezone
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise SourceError(f"{ctx.field}.timezone: unknown IANA time zone {name!r}") from None


def option_time(ctx: SourceContext, name: str) -> datetime | None:
    """A time option of the source (`started_at`, `first_sample_at`...) as UTC; YAML may give text or a datetime."""
    value = ctx.option(name)
    if value is None:
        return None
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=manifest_zone(ctx))
        return aware.astimezone(timezone.utc)
    if isinstance(value, str):
        parsed = parse_iso(value, manifest_zone(ctx))
        if parsed is not None:
            return parsed
    raise SourceError(f"{ctx.field}.{name}: expected an ISO-8601 time such as 2026-12-02T09:46:42.243Z, got {value!r}")


def option_seconds(ctx: SourceContext, name: str) -> float | None:
    """A positive number of seconds option (`interval_s`)."""
    value = ctx.option(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise SourceError(f"{ctx.field}.{name}: expected a positive number of seconds, got {value!r}")
    return float(value)


def raw_relation(con: duckdb.DuckDBPyConnection, columns: dict[str, tuple[str, list[Any]]]) -> duckdb.DuckDBPyRelation:
    """One relation from equal-length Python lists: {name: (duckdb type, values)}; None becomes NULL.

    Names and types come from the readers' fixed column lists, never from the file.
    """
    expressions = [f'unnest($p{number}::{sql_type}[]) as "{name}"' for number, (name, (sql_type, _)) in
                   enumerate(columns.items())]
    params = {f"p{number}": values for number, (_, values) in enumerate(columns.values())}
    return con.sql("select " + ", ".join(expressions), params=params)


def load_samples(ctx: SourceContext, staged: duckdb.DuckDBPyRelation, time_basis: str) -> tuple[int, list[str]]:
    """Place staged samples in their iterations, append them to `host_sample_facts`; (rows, notes)."""
    con = ctx.con
    role = ctx.source.default_role
    con.execute(
        "insert into host_metric_sources values ($run_id, $key, $host, $role, $kind, $path, $basis)",
        {"run_id": ctx.manifest.run_id, "key": ctx.source_key, "host": ctx.source.host, "role": role,
         "kind": ctx.source.kind, "path": ctx.source.path, "basis": time_basis},
    )
    staged.create_view("stg_host_samples", replace=True)
    set_load_context(ctx)
    build_model(con, "host_sample_facts")
    con.execute("drop view stg_host_samples")
    rows, untimed, outside = con.execute(
        "select count(*), count(*) filter (where sampled_at is null), "
        "count(*) filter (where sampled_at is not null and iteration is null) "
        "from host_sample_facts where source_key = $key",
        {"key": ctx.source_key},
    ).fetchone()
    notes = []
    if outside:
        notes.append(f"{outside} samples fall outside every iteration (kept, iteration NULL)")
    if untimed:
        notes.append(f"{untimed} samples have no time: they count for the whole run only, not per iteration")
    return rows, notes


def year_hint(ctx: SourceContext) -> int:
    """The run's year, to learn which abbreviations the manifest's zone uses."""
    return ctx.manifest.started_at.year
