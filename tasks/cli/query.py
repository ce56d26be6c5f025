"""`perfcampaign sql | runs | show`: questions to the warehouse, answered as a table, CSV or JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tasks.cli.matrix import write_hooks, write_matrix, write_offered, write_soak_tables
from tasks.cli.options import FormatOption, WarehouseOption, fail
from tasks.cli.output import echo, write_rows
from tasks.report.drift_words import DRIFT_COLUMNS, drift_cells


def query(warehouse: str | Path | None, sql: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
    """Columns and rows of one read-only query."""
    from tasks.warehouse.connection import open_warehouse, warehouse_path  # heavy: duckdb

    with open_warehouse(warehouse_path(warehouse)) as con:
        cursor = con.execute(sql, params)
        if cursor.description is None:  # a statement without a result (SET, PRAGMA...)
            return [], []
        return [d[0] for d in cursor.description], cursor.fetchall()


def sql_command(
    sql: Annotated[str, typer.Argument(metavar="QUERY", help="SQL over the public marts (see docs/warehouse.md)")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
) -> None:
    """Run a read-only SQL query against the warehouse."""
    if not sql.strip():
        fail("the query is empty")
    columns, rows = query(warehouse, sql)
    write_rows(columns, rows, fmt)


def runs_command(warehouse: WarehouseOption = None, fmt: FormatOption = "table") -> None:
    """List the runs in the warehouse, newest first."""
    from tasks.warehouse.models import model_sql  # heavy: duckdb

    columns, rows = query(warehouse, model_sql("reports/runs"))
    write_rows(columns, rows, fmt)


def show_command(
    run_id: Annotated[str, typer.Argument(help="the run to show")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
) -> None:
    """The per-iteration table of a run (both sides, each host and all hosts), an open model's offered against
    achieved load, its verdicts, a matrix run's pivot (load level down, series across) and the stage hooks run
    per iteration."""
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb
    from tasks.warehouse.models import model_sql  # heavy: duckdb

    params = {"run_id": run_id}
    columns, rows = query(warehouse, model_sql("reports/show_iterations"), params)
    if not rows:
        fail(f"no run {run_id!r} with requests in {warehouse_path(warehouse)} (see `perfcampaign runs`)")
    write_rows(columns, rows, fmt, title=f"{run_id}: requests per iteration (times in ms)")
    _, ((verdict, status, reason),) = query(warehouse, model_sql("reports/run_verdict"), params)
    if fmt == "table":
        echo("\n" + f"{run_id}: {verdict}" + (f" (run {status}: {reason})" if verdict.startswith("RUN") else ""))
    write_offered(run_id, *query(warehouse, model_sql("reports/report_offered"), params), fmt)
    columns, rows = query(warehouse, model_sql("reports/show_verdicts"), params)
    if rows:
        echo("")
        write_rows(columns, rows, fmt, title=f"{run_id}: requirements")
    write_matrix(run_id, query(warehouse, model_sql("reports/show_matrix"), params)[1], fmt)
    write_hooks(run_id, *query(warehouse, model_sql("reports/show_hooks"), params), fmt)
    show_soak(warehouse, run_id, fmt)


def show_soak(warehouse: str | None, run_id: str, fmt: str) -> None:
    """A soak's part of `show`: where its load came from, its summary per side, its resources per host and its
    drift verdicts (mart soak_drift), each trend worsening or improving in a period it reads in."""
    from tasks.warehouse.models import model_sql  # heavy: duckdb

    columns, rows = query(warehouse, model_sql("reports/report_soak"), {"run_id": run_id})
    if not rows:
        return
    soak = dict(zip(columns, rows[0]))
    if soak["source_run_id"] and fmt == "table":
        echo("\n" + (
            f"{run_id}: soak at {soak['target_key']}={soak['target_value']:g}, {soak['share_of_max']:g} x "
            f"{soak['max_load_level']:g} of run {soak['source_run_id']} (its maximum {soak['max_calls_per_s']:.1f} "
            f"calls/s at iteration {soak['max_iteration']}: {soak['max_load']})"))
    params = {"run_id": run_id}
    write_soak_tables(run_id, query(warehouse, model_sql("reports/report_soak_summary"), params),
                      query(warehouse, model_sql("reports/report_soak_hosts"), params), fmt)
    columns, rows = query(warehouse, model_sql("reports/show_soak"), params)
    if rows:
        echo("")
        write_rows(DRIFT_COLUMNS, [tuple(drift_cells(dict(zip(columns, row)))) for row in rows], fmt,
                   title=f"{run_id}: soak drift over {soak['windows']} windows")
