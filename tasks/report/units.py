"""Units, defined once for every output (show, the report, junit, the artifacts): which unit a column or
metric is stored in (read from its name: `avg_ms`, `mem_free_min_kb`, `error_rate`, `calls_per_s`), which unit
it is shown in (KB and bytes as MiB, a rate as %), how its value is written and what its heading says.

No pandas here: `perfcampaign show` imports it without paying for pandas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """How values of a stored unit are shown: `symbol` after the number, `scale` from stored to shown."""

    symbol: str
    scale: float = 1.0
    decimals: int = 1
    signed: bool = False


UNITS: dict[str, Unit] = {
    "ms": Unit("ms"),
    "calls/s": Unit("calls/s"),
    "rate": Unit("%", 100, 2),  # a fraction (error_rate) shown in %
    "%": Unit("%"),
    "pct": Unit("%", signed=True),  # a change in %
    "kb": Unit("MiB", 1 / 1024),
    "bytes": Unit("MiB", 1 / (1024 * 1024)),
    "s": Unit("s", decimals=2),
    "bytes/s": Unit("MiB/s", 1 / (1024 * 1024)),
    "bytes/h": Unit("MiB/h", 1 / (1024 * 1024)),
    "/s": Unit("/s"),  # any other rate per second: blocks, context switches, packets
    "count": Unit("", decimals=0),
}
# Name endings and the stored unit they mean, the first match wins (error_rate_with_dropped before _s).
SUFFIXES = (("error_rate", "rate"), ("error_rate_with_dropped", "rate"), ("_share", "rate"), ("_ms", "ms"),
            ("calls_per_s", "calls/s"), ("offered_per_s", "calls/s"),
            ("achieved_per_s", "calls/s"), ("rate_per_s", "calls/s"), ("_bytes_per_s", "bytes/s"), ("_bytes_per_h", "bytes/h"), ("_per_s", "/s"),
            ("_pct", "%"), ("_kb", "kb"), ("_bytes", "bytes"), ("_s", "s"))
COUNTS = ("calls", "errors", "samples", "dropped", "windows", "iteration", "slow_calls")


def unit_of(name: str) -> str:
    """The stored unit of a column or metric, from its name ('' when the name says none)."""
    for suffix, unit in SUFFIXES:
        if name.endswith(suffix):
            return unit
    if name.startswith("cpu_") and name.endswith(("_avg", "_min", "_max")):
        return "%"
    if name in COUNTS or name.endswith("_count") or name.startswith("count_"):
        return "count"
    return ""


def _number(value: float, unit: Unit) -> str:
    shown = value * unit.scale
    sign = "+" if unit.signed else ""
    return f"{shown:{sign},.{unit.decimals}f}"


def shown(value: float | int | None, unit: str) -> float | int | None:
    """A value converted to its shown unit and rounded as it is written (a terminal table right-aligns it)."""
    if value is None or isinstance(value, float) and math.isnan(value) or unit not in UNITS:
        return value
    spec = UNITS[unit]
    return round(value * spec.scale) if spec.decimals == 0 else round(value * spec.scale, spec.decimals)


def plain(value: float | int | None, unit: str) -> str:
    """A value in its shown unit without the symbol, for a table whose heading says the unit."""
    if value is None or isinstance(value, float) and math.isnan(value):
        return ""
    if unit not in UNITS:
        return f"{value:,}" if isinstance(value, int) else f"{value:,.3f}".rstrip("0").rstrip(".")
    return _number(value, UNITS[unit])


def with_unit(value: float | int | None, unit: str) -> str:
    """A value in its shown unit with the symbol, for a sentence: `12.3 ms`, `0.52 %`, `1,024.0 MiB`."""
    text = plain(value, unit)
    symbol = UNITS[unit].symbol if unit in UNITS else ""
    return f"{text} {symbol}" if text and symbol and symbol != "/s" else f"{text}{symbol}" if text else ""


def heading(name: str, unit: str | None = None) -> str:
    """A column's heading: its name without the stored unit, then the shown one: `mem_free_min_kb` ->
    `mem_free_min (MiB)`, `calls_per_s` -> `calls/s`, `blocks_in_per_s` -> `blocks_in/s`, `error_rate` ->
    `error_rate (%)`, `calls` -> `calls`."""
    unit = unit_of(name) if unit is None else unit
    if unit not in UNITS or not UNITS[unit].symbol:
        return name
    if unit == "calls/s":  # `client_calls_per_s` -> `client calls/s`, `offered_per_s` -> `offered calls/s`
        stem = name.removesuffix("_per_s").removesuffix("calls").rstrip("_")
        return f"{stem} calls/s" if stem else "calls/s"
    stem = next((name.removesuffix(suffix) for suffix, stored in SUFFIXES
                 if stored == unit and name.endswith(suffix) and suffix.startswith("_")), name)
    if unit == "/s":  # any other rate reads as its name per second
        return stem + "/s"
    return f"{stem} ({UNITS[unit].symbol})"


PERIODS = (("h", 1.0), ("min", 60.0), ("s", 3600.0))


def per_time(per_hour: float, limit: float = 100.0) -> tuple[float, str]:
    """A rate given per hour in the longest period it reads in without thousands: -19,700 %/h is -5.5 %/s,
    +2 %/h stays +2 %/h. Returns the divisor of the hourly figure and the period's name (`h`, `min`, `s`)."""
    for name, divisor in PERIODS:
        if abs(per_hour / divisor) <= limit:
            return divisor, name
    return PERIODS[-1][1], PERIODS[-1][0]
