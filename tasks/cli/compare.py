"""`perfcampaign compare A B`: two runs side by side, with whether each change is beyond noise."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Optional

import typer

from tasks.cli.options import FormatOption, WarehouseOption, fail
from tasks.cli.output import _json_value, echo, write_rows
from tasks.settings import COMPARE_ALPHA


def as_rows(items: list) -> tuple[list[str], list[tuple]]:
    """Dataclass instances as (columns, rows) for `tasks.cli.output.write_rows`."""
    if not items:
        return [], []
    columns = list(asdict(items[0]))
    return columns, [tuple(asdict(item).values()) for item in items]


def compare_command(
    run_a: Annotated[str, typer.Argument(help="the run before (the baseline)")],
    run_b: Annotated[str, typer.Argument(help="the run after")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
    only: Annotated[Optional[str], typer.Option(help="print one table: requirements, metrics or hosts")] = None,
    alpha: Annotated[float, typer.Option(help="significance level of the tests")] = COMPARE_ALPHA,
    max_labels: Annotated[int, typer.Option(help="compare the busiest labels of each side too (0: none)")] = 5,
) -> None:
    """Compare two runs iteration by iteration: A, B, % change, and whether it is beyond noise."""
    if only not in (None, "requirements", "metrics", "hosts"):
        raise typer.BadParameter(f"{only!r}: expected requirements, metrics or hosts", param_hint="--only")
    if fmt == "csv" and only is None:
        raise typer.BadParameter("csv writes one table: add --only requirements, metrics or hosts", param_hint="--format")
    if not 0 < alpha < 1:
        raise typer.BadParameter(f"{alpha:g}: a significance level between 0 and 1 (e.g. 0.01)", param_hint="--alpha")
    from tasks.report.compare import compare_runs, requirement_changes  # heavy: numpy, scipy, pandas
    from tasks.report.compare_hosts import compare_hosts  # heavy: numpy, scipy
    from tasks.warehouse.connection import open_warehouse, warehouse_path  # heavy: duckdb
    with open_warehouse(warehouse_path(warehouse)) as con:
        params = {"a": run_a, "b": run_b}
        known = {r[0] for r in con.execute("select run_id from runs where run_id in ($a, $b)", params).fetchall()}
        for run in (run_a, run_b):
            if run not in known:
                fail(f"no run {run!r} in {warehouse_path(warehouse)} (see `perfcampaign runs`)")
        changes = compare_runs(con, run_a, run_b, alpha, max_labels)
        requirements = requirement_changes(con, run_a, run_b, changes)
        hosts = compare_hosts(con, run_a, run_b, alpha)
    tables = {"requirements": as_rows(requirements), "metrics": as_rows(changes), "hosts": as_rows(hosts)}
    if only:
        tables = {only: tables[only]}
    if fmt == "json":
        data = {name: [{c: _json_value(v) for c, v in zip(cols, row)} for row in rows]
                for name, (cols, rows) in tables.items()}
        echo(json.dumps(data if only is None else data[only], indent=1))
        return
    for position, (name, (columns, rows)) in enumerate(tables.items()):
        if not rows:
            continue
        if fmt == "table":
            columns, rows = _terminal_table(name, columns, rows)
            if position:
                echo("")
        write_rows(columns, rows, fmt, title=f"{run_a} -> {run_b}: {name} (alpha {alpha:g})")


def _terminal_table(name: str, columns: list[str], rows: list[tuple]) -> tuple[list[str], list[tuple]]:
    """The columns that fit a terminal; a load that differs between A and B is shown, p-values as printed."""
    from tasks.report.fmt import number  # heavy: pandas
    short = {"requirements": ["test", "unit", "requirement", "expectation", "before", "after", "change_pct", "verdict"],
             "metrics": ["iteration", "load", "side", "label", "metric", "a", "b", "change_pct", "test", "p_value",
                         "direction"],
             "hosts": ["iteration", "host", "metric", "a", "b", "change_pct", "test", "p_value", "direction"]}[name]
    picked = []
    for row in rows:
        values = dict(zip(columns, row))
        if name == "metrics":
            same = values["load_a"] == values["load_b"]
            values["load"] = values["load_b"] if same else f"{values['load_a']} -> {values['load_b']}"
        if name in ("metrics", "hosts"):
            values["p_value"] = number(values["p_value"], "p") if values["p_value"] is not None else None
        picked.append(tuple(values[c] for c in short))
    return short, picked
