"""`perfcampaign warehouse ...`: move runs between a warehouse file and a lake, and keep a lake tidy."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from tasks.cli.output import FormatOption, write_rows
from tasks.warehouse.connection import warehouse_path
from tasks.warehouse.moving import copy_runs, maintain

warehouse_app = typer.Typer(no_args_is_help=True, help="Copy runs between warehouses; clean a lake's old files.")


@warehouse_app.command("copy")
def copy_command(
    source: Annotated[str, typer.Argument(help="DuckDB file or DuckLake URL to copy from")],
    destination: Annotated[str, typer.Argument(help="DuckDB file or DuckLake URL to copy into (made if new)")],
    runs: Annotated[Optional[list[str]], typer.Option("--run", help="a run to copy (repeatable; default: all)")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Copy runs (raw rows, marts, triage) replacing them in the destination; row counts checked at the end."""
    report = copy_runs(warehouse_path(source), warehouse_path(destination), runs)
    write_rows(["table", "rows"], sorted(report.rows_by_table.items()), fmt)
    typer.echo(f"copied {len(report.runs)} run(s) into {warehouse_path(destination)}", err=True)


@warehouse_app.command("maintain")
def maintain_command(
    warehouse: Annotated[Optional[str], typer.Option("--warehouse", "-w", help="DuckDB file or DuckLake URL")] = None,
    older_than_hours: Annotated[float, typer.Option(help="keep snapshots and files younger than this")] = 1.0,
) -> None:
    """Expire a lake's old snapshots and delete files nothing references (a killed ingest's); checkpoint a file."""
    for line in maintain(warehouse_path(warehouse), older_than_hours):
        typer.echo(line)
