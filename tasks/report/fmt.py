"""How numbers are written in the report: the same value always reads the same way, units named."""

from __future__ import annotations

import html
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from tasks.bundle.printable import printable
from tasks.report import units


def is_missing(value: Any) -> bool:
    """None, NaN or pandas NA/NaT (a list or array is never missing)."""
    if value is None:
        return True
    try:
        missing = pd.isna(value)
    except (TypeError, ValueError):
        return False
    return bool(missing) if isinstance(missing, bool | np.bool_) else False


def number(value: Any, unit: str = "") -> str:
    """A value with its unit named (units.py defines them: `ms`, `calls/s`, `rate` (a fraction shown in %), `%`,
    `pct` (signed %), `count`, `kb`, `bytes` (as MiB), `s`, `/s`), `p` (a p-value), or '' (shortest form)."""
    if is_missing(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if not isinstance(value, int | float):
        return str(value)
    if unit in units.UNITS:
        return units.with_unit(value, unit)
    if unit == "p":
        return "< 0.001" if value < 0.001 else f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else f"{value:.6g}"


def metric_unit(metric: str) -> str:
    """The unit `number` uses for a metric or column name (units.unit_of)."""
    return units.unit_of(metric)


def plain(value: Any, unit: str) -> str:
    """A value already in `unit`, without it, for tables with a unit column (a rate in % to 0.01)."""
    if is_missing(value):
        return ""
    return f"{value:.2f}" if unit == "%" else f"{value:,.1f}"


def markdown_safe(text: str) -> str:
    """Markdown whose text came from logs, labels or reasons: `<`, `>` and `&` escaped, so a label such as
    `<img onerror=...>` reads as text in summary.md and in the Prefect UI instead of becoming HTML; control
    characters shown as `\\x1b` (an ESC in summary.md would act on the terminal that shows it)."""
    return html.escape(printable(text, keep_lines=True), quote=False)
