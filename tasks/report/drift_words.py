"""A soak's drift verdicts in words people read (no pandas: `perfcampaign show` prints them too): whether a
trend worsens or improves (a fall in latency is an improvement, a fall in throughput is not), and its slope
in the period it reads in without thousands (`-5.5 %/s`, not `-1.97e+04 %/h`)."""

from __future__ import annotations

import math
from typing import Any

from tasks.report import units

UNIT = {"error_rate": "pp", "old_gen_after_gc_kb": "% of capacity"}  # else % of the soak's mean
RISING_IS_WORSE = {"avg_ms": True, "p95_ms": True, "calls_per_s": False, "error_rate": True, "old_gen_after_gc_kb": True}
DRIFT_COLUMNS = ["metric", "scope", "windows", "trend", "slope", "95 % interval", "R²", "tolerance", "verdict"]


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def trend_word(metric: str, slope: float | None) -> str:
    """`worsening`, `improving` or `flat` for a slope of `metric`."""
    if not _known(slope) or slope == 0:
        return "flat" if _known(slope) else ""
    return "worsening" if (slope > 0) == RISING_IS_WORSE.get(metric, True) else "improving"


def rate(per_hour: float, metric: str, divisor: float, period: str, signed: bool = True) -> str:
    """A drift figure given per hour, in the row's period: `+5.5 %/s`, `-0.10 pp/h`."""
    shown = per_hour / divisor
    return f"{shown:{'+' if signed else ''},.{1 if abs(shown) >= 1 else 2}f} {UNIT.get(metric, '%')}/{period}"


def drift_cells(row: dict[str, Any]) -> list[str]:
    """One soak_drift row as DRIFT_COLUMNS cells, its slope, interval and tolerance in the period its slope reads
    in (units.per_time)."""
    metric, slope = row["metric"], row["slope_pct_per_h"]
    divisor, period = units.per_time(slope) if _known(slope) else (1.0, "h")
    interval = (f"{rate(row['ci_low_pct_per_h'], metric, divisor, period)} to "
                f"{rate(row['ci_high_pct_per_h'], metric, divisor, period)}") if _known(row["ci_low_pct_per_h"]) else ""
    return [metric, f"{row['side']} {row['host']}", f"{int(row['windows']):,}", trend_word(metric, slope),
            rate(slope, metric, divisor, period) if _known(slope) else "", interval,
            f"{row['r2']:.3f}".rstrip("0").rstrip(".") if _known(row["r2"]) else "",
            "±" + rate(row["max_pct_per_h"], metric, divisor, period, signed=False), row["verdict"]]
