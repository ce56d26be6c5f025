"""`perfcampaign show`'s extra tables for a matrix or hooked run: the pivot of throughput by load level and
series, and the stage hooks run around each iteration."""

from __future__ import annotations

from typing import Any

import typer

from tasks.cli.output import write_rows


def pivot(rows: list[tuple]) -> dict[str, tuple[list[str], list[list[Any]]]]:
    """Rows of `sql/reports/show_matrix.sql` as one pivot per side: the load level down, the series across,
    each cell `calls/s (p95 ms)` with `*` at the series' knee."""
    sides: dict[str, dict[str, Any]] = {}
    for side, series, level, calls_per_s, p95_ms, is_knee in rows:
        table = sides.setdefault(side, {"series": [], "cells": {}})
        if series not in table["series"]:
            table["series"].append(series)
        p95 = "" if p95_ms is None else f" ({p95_ms:.3g})"
        calls = "" if calls_per_s is None else f"{calls_per_s:.1f}"
        table["cells"][(level, series)] = f"{calls}{p95}{'*' if is_knee else ''}"
    pivots = {}
    for side, table in sides.items():
        series = sorted(table["series"])
        levels = sorted({level for level, _ in table["cells"]})
        body = [[_level(level), *(table["cells"].get((level, name), "") for name in series)] for level in levels]
        pivots[side] = (["load", *series], body)
    return pivots


def _level(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_matrix(run_id: str, rows: list[tuple], fmt: str) -> None:
    """The pivot of every side that has more than one series (nothing for a single-series run)."""
    for side, (columns, body) in pivot(rows).items():
        typer.echo("")
        write_rows(columns, [tuple(row) for row in body], fmt,
                   title=f"{run_id}: {side} calls/s (p95 ms) by load level and series; * the series' knee")


def write_hooks(run_id: str, columns: list[str], rows: list[tuple], fmt: str) -> None:
    """The stage hooks of the run, if it ran any."""
    if rows:
        typer.echo("")
        write_rows(columns, rows, fmt, title=f"{run_id}: stage hooks per iteration (exit status, seconds)")
