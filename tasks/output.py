"""Query results for people and machines: a table that fits the terminal, CSV, or a JSON array."""

from __future__ import annotations

import csv
import json
import math
import sys
from datetime import date, datetime
from decimal import Decimal
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

FORMATS = ("table", "csv", "json")


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else f"{value:.6g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return str(value)


def write_rows(columns: list[str], rows: list[tuple], fmt: str, out: TextIO = sys.stdout, title: str = "") -> None:
    """Write rows as `table` (fits the terminal width), `csv` or `json` (an array of objects)."""
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    elif fmt == "json":
        json.dump([{c: _json_value(v) for c, v in zip(columns, row)} for row in rows], out, indent=1)
        out.write("\n")
    elif fmt == "table":
        table = Table(title=title or None, title_justify="left", show_lines=False, pad_edge=False, box=None)
        for i, column in enumerate(columns):
            numeric = bool(rows) and all(isinstance(r[i], int | float) or r[i] is None for r in rows)
            # Numbers never wrap (a folded number misleads); text folds to keep the table in the terminal.
            table.add_column(column, justify="right" if numeric else "left", no_wrap=numeric, overflow="fold")
        for row in rows:
            table.add_row(*(_cell(v) for v in row))
        console = Console(file=out, soft_wrap=False)
        if not console.is_terminal:
            console.width = 200  # piped output: do not fold to a guessed width
        console.print(table)
    else:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
