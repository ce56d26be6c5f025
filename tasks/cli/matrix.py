"""`perfcampaign show`'s extra tables for a matrix or hooked run: the pivot of throughput by load level and
series, and the stage hooks run around each iteration."""

from __future__ import annotations

from typing import Any



from tasks.cli.output import write_rows


def pivot(rows: list[tuple]) -> dict[str, tuple[str, list[str], list[list[Any]]]]:
    """Rows of `sql/reports/show_matrix.sql` as one pivot per side: the load level down, the series across in
    the order they ran, each cell `calls/s (p95 ms)` with `*` at the series' knee. Columns are named by the
    series' values (`0/64`) when every series has the same keys, said once in the returned caption."""
    sides: dict[str, dict[str, Any]] = {}
    for side, series, level, calls_per_s, p95_ms, is_knee, iteration in rows:
        table = sides.setdefault(side, {"first": {}, "cells": {}})
        table["first"][series] = min(iteration, table["first"].get(series, iteration))
        p95 = "" if p95_ms is None else f" ({p95_ms:.3g})"
        calls = "" if calls_per_s is None else f"{calls_per_s:.1f}"
        table["cells"][(level, series)] = f"{calls}{p95}{'*' if is_knee else ''}"
    pivots = {}
    for side, table in sides.items():
        series = sorted(table["first"], key=table["first"].get)
        levels = sorted({level for level, _ in table["cells"]}, key=lambda level: (level is None, level))
        body = [[_level(level), *(table["cells"].get((level, name), "") for name in series)] for level in levels]
        caption, names = _names(series)
        pivots[side] = (caption, ["load", *names], body)
    return pivots


def _level(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _names(series: list[str]) -> tuple[str, list[str]]:
    """Short column names: `0/64` for `delay_ms=0 message_size=64` when all series share their keys."""
    pairs = [[item.partition("=") for item in name.split(" ")] for name in series]
    keys = {tuple(key for key, _, _ in items) for items in pairs}
    if len(keys) != 1 or not all(sep for items in pairs for _, sep, _ in items):
        return "series", series
    return "series " + "/".join(next(iter(keys))), ["/".join(value for _, _, value in items) for items in pairs]


def write_matrix(run_id: str, rows: list[tuple], fmt: str) -> None:
    """The pivot of every side that has more than one series (nothing for a single-series run)."""
    for side, (caption, columns, body) in pivot(rows).items():
        echo("")
        if fmt == "table":  # above the table, not its title: a title wraps at the table's width
            echo(f"{run_id}: {side} calls/s (p95 ms) by load level and {caption}; * the knee")
        write_rows(columns, [tuple(row) for row in body], fmt)


def write_hooks(run_id: str, columns: list[str], rows: list[tuple], fmt: str) -> None:
    """The stage hooks of the run, if it ran any."""
    if rows:
        echo("")
        write_rows(columns, rows, fmt, title=f"{run_id}: stage hooks per iteration (exit status, seconds)")
