"""How numbers are written in the report: the same value always reads the same way, units named."""

from __future__ import annotations

import html
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from tasks.bundle.printable import printable


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
    """A value in its unit: `ms`, `calls/s`, `rate` (a fraction shown in %), `%`, `pct` (signed %), `count`,
    `kb`, `bytes`, `s`, `p` (a p-value), or '' (shortest form)."""
    if is_missing(value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if not isinstance(value, int | float):
        return str(value)
    if unit == "count":
        return f"{int(value):,}"
    if unit == "rate":
        return f"{100 * value:.2f} %"
    if unit == "pct":
        return f"{value:+.1f} %"
    if unit == "%":
        return f"{value:.1f} %"
    if unit in ("ms", "calls/s", "s"):
        return f"{value:,.1f} {unit}" if unit != "s" else f"{value:,.2f} s"
    if unit == "kb":
        return f"{value / 1024:,.1f} MiB"
    if unit == "bytes":
        return f"{value / (1024 * 1024):,.1f} MiB"
    if unit == "p":
        return "< 0.001" if value < 0.001 else f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else f"{value:.6g}"


def metric_unit(metric: str) -> str:
    """The unit `number` uses for a metric or column name."""
    if metric.endswith(("error_rate", "error_rate_with_dropped")):
        return "rate"
    if metric.endswith("_ms"):
        return "ms"
    if metric.endswith("calls_per_s"):
        return "calls/s"
    if metric.endswith("_pct") or metric.endswith("_avg") or metric.endswith("_min"):
        return "%" if metric.startswith("cpu") or metric.endswith("_pct") else ""
    if metric.endswith("_kb"):
        return "kb"
    if metric.endswith("_bytes"):
        return "bytes"
    if metric.endswith("_s"):
        return "s"
    if metric in ("calls", "errors", "samples") or metric.endswith("_count") or metric.startswith("count_"):
        return "count"
    return ""


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
