"""`perfcampaign show`'s extra tables: the offered against the achieved load of an open model, the pivot of
throughput by load level and series of a matrix run, the stage hooks run around each iteration, and a soak's
summary and resources."""

from __future__ import annotations

from typing import Any

from tasks.cli.output import echo, write_rows
from tasks.report import units


def pivot(rows: list[tuple], cell=None) -> dict[str, tuple[str, list[str], list[list[Any]]]]:
    """Rows of `sql/reports/show_matrix.sql` as one pivot per side: the load level down, the series across in
    the order they ran, each cell `cell(row)` (default `calls/s (p95 ms)` with `*` at the series' knee). Columns
    are named by the series' values (`0/64`) when every series has the same keys, said once in the caption."""
    cell = cell or _throughput
    sides: dict[str, dict[str, Any]] = {}
    for row in rows:
        side, series, level, iteration = row[0], row[1], row[2], row[6]
        table = sides.setdefault(side, {"first": {}, "cells": {}})
        table["first"][series] = min(iteration, table["first"].get(series, iteration))
        table["cells"][(level, series)] = cell(row)
    pivots = {}
    for side, table in sides.items():
        series = sorted(table["first"], key=table["first"].get)
        levels = sorted({level for level, _ in table["cells"]}, key=lambda level: (level is None, level))
        body = [[_level(level), *(table["cells"].get((level, name), "") for name in series)] for level in levels]
        caption, names = _names(series)
        pivots[side] = (caption, ["load", *names], body)
    return pivots


def _throughput(row: tuple) -> str:
    calls_per_s, p95_ms, is_knee = row[3], row[4], row[5]
    p95 = "" if p95_ms is None else f" ({p95_ms:.3g})"
    calls = "" if calls_per_s is None else f"{calls_per_s:.1f}"
    return f"{calls}{p95}{'*' if is_knee else ''}"


def _per_instance(row: tuple) -> str:
    """`calls/s per instance (failure %)` when the load names its instances, else the failure ratio alone."""
    error_rate, per_instance = row[7], row[8]
    failures = "" if error_rate is None else f"{100 * error_rate:.2f} %"
    return failures if per_instance is None else f"{per_instance:.1f} ({failures})"


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
    """The pivots of every side that has more than one series (nothing for a single-series run): throughput and
    p95, then the failure ratio with the throughput per instance (capacity.instance_key)."""
    for side, (caption, columns, body) in pivot(rows).items():
        echo("")
        if fmt == "table":  # above the table, not its title: a title wraps at the table's width
            echo(f"{run_id}: {side} calls/s (p95 ms) by load level and {caption}; * the knee")
        write_rows(columns, [tuple(row) for row in body], fmt)
    for side, (caption, columns, body) in pivot(rows, _per_instance).items():
        echo("")
        if fmt == "table":
            per_instance = any(row[0] == side and row[8] is not None for row in rows)
            echo(f"{run_id}: {side} " + ("calls/s per instance (failure %)" if per_instance else "failure %")
                       + f" by load level and {caption}")
        write_rows(columns, [tuple(row) for row in body], fmt)


def write_hooks(run_id: str, columns: list[str], rows: list[tuple], fmt: str) -> None:
    """The stage hooks of the run, if it ran any."""
    if rows:
        echo("")
        write_rows(columns, rows, fmt, title=f"{run_id}: stage hooks per iteration (exit status, seconds)")


def write_with_units(columns: list[str], rows: list[tuple], fmt: str, title: str) -> None:
    """Rows of columns named with their unit (`offered_per_s`, `error_rate`): for people each heading names
    the unit and each value is in it (tasks/report/units.py, as in the report); csv and json keep the stored
    names and values, for machines."""
    if fmt != "table":
        write_rows(columns, rows, fmt)
        return
    spec = [units.unit_of(column) if column != "iteration" else "" for column in columns]
    write_rows([units.heading(column, unit) for column, unit in zip(columns, spec)],
               [tuple(units.shown(value, unit) for value, unit in zip(row, spec)) for row in rows], fmt, title=title)


def write_offered(run_id: str, columns: list[str], rows: list[tuple], fmt: str) -> None:
    """An open model's offered against achieved load per step (`sql/reports/report_offered.sql`), if any."""
    if rows:
        echo("")
        write_with_units(columns, rows, fmt, f"{run_id}: offered against achieved load per step")


def write_soak_tables(run_id: str, summary: tuple[list[str], list[tuple]], hosts: tuple[list[str], list[tuple]],
                      fmt: str) -> None:
    """A soak's summary per side and its resources per host (report_soak_summary, report_soak_hosts)."""
    for (columns, rows), title in ((summary, "the soak per side"), (hosts, "resources per host over the soak")):
        if rows:
            echo("")
            write_with_units(columns, rows, fmt, f"{run_id}: {title}")
