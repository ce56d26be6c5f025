"""Query results for people and machines: a table that fits the terminal, CSV, or a JSON array."""

from __future__ import annotations

import base64
import csv
import json
import math
import shutil
import sys
import unicodedata
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, TextIO
from uuid import UUID

import typer

from tasks.bundle.printable import printable

FORMATS = ("table", "csv", "json")


def echo(text: str = "", err: bool = False) -> None:
    """Print a message line (stderr with `err`) through the one escape: a name from a bundle cannot act on
    the terminal. Every line the CLI prints passes here or through `write_rows`."""
    typer.echo(printable(str(text), keep_lines=True), err=err)


def _json_value(value: Any) -> Any:
    """A DuckDB value as JSON: times as ISO-8601 text, intervals in seconds, NaN and infinities as null."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
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
    return printable(str(value))


def write_rows(columns: list[str], rows: list[tuple], fmt: str, out: TextIO = sys.stdout, title: str = "",
               width: int | None = None) -> None:
    """Write rows as `table` (fits the terminal width, else one record at a time), `csv` or `json` (an array of
    objects). `width`: the table's width instead of the terminal's (200 when piped)."""
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([printable(column) for column in columns])  # an ESC in a value shown, not acted on
        writer.writerows([printable(v, keep_lines=True) if isinstance(v, str) else v for v in row] for row in rows)
    elif fmt == "json":  # built whole before writing: an error leaves no half array on stdout
        out.write(json.dumps([{c: _json_value(v) for c, v in zip(columns, row)} for row in rows], indent=1) + "\n")
    elif fmt == "table":
        _write_table(columns, rows, out, title, width)
    else:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def _write_table(columns: list[str], rows: list[tuple], out: TextIO, title: str, width: int | None) -> None:
    """Padded columns, numbers right-aligned, laid out here: a table library (rich) took 0.8 s for 1,800 rows,
    and read `[bold]` in a label as markup. Every text is printed as it is, control characters escaped."""
    terminal = out.isatty()
    width = width or (shutil.get_terminal_size().columns if terminal else 200)  # piped: do not fold to a guess
    header = [printable(column) for column in columns]
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([_width(name)] + [_width(row[i]) for row in cells]) for i, name in enumerate(header)]
    if sum(widths) + 2 * (len(columns) - 1) > width:
        _write_records(out, header, cells, title, width)  # folded cells would read as other values or rows
        return
    numeric = [bool(rows) and all(isinstance(r[i], int | float) or r[i] is None for r in rows) for i in range(len(columns))]

    def line(values: list[str]) -> str:
        padded = [" " * (widths[i] - _width(value)) + value if numeric[i] else value + " " * (widths[i] - _width(value))
                  for i, value in enumerate(values)]
        return "  ".join(padded).rstrip()

    if title:
        out.write(printable(title) + "\n")
    out.write((f"\x1b[1m{line(header)}\x1b[0m" if terminal else line(header)) + "\n")
    out.write("".join(line(row) + "\n" for row in cells))


def _width(text: str) -> int:
    """Columns a text takes in a terminal: East Asian wide characters two, combining marks none."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _write_records(out: TextIO, columns: list[str], cells: list[list[str]], title: str, width: int) -> None:
    """A table too wide for the terminal, one record at a time: `column  value` lines (like psql's \\x)."""
    if title:
        out.write(printable(title) + "\n")
    name_width = max(len(column) for column in columns)
    for number, row in enumerate(cells, start=1):
        out.write(f"-[ {number} ]" + "-" * max(0, min(width, 40) - len(str(number)) - 5) + "\n")
        out.writelines(f"{column:<{name_width}}  {value}\n" for column, value in zip(columns, row))
