"""`perfcampaign ingest | warehouse copy | warehouse maintain`: load bundles, move runs between a warehouse file
and a lake, and keep a lake tidy."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from tasks.cli.history import analyse_after
from tasks.cli.options import FormatOption, WarehouseOption
from tasks.cli.output import echo, write_rows
from tasks.cli.summary import print_ingest_report


def ingest_command(
    bundle: Annotated[Path, typer.Argument(help="bundle folder (with run.yaml)")],
    warehouse: WarehouseOption = None,
) -> None:
    """Load a perflog bundle; re-ingesting a run_id replaces it in one transaction."""
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb
    from tasks.warehouse.ingest import ingest_bundle  # heavy: pydantic, the readers

    report = ingest_bundle(bundle, warehouse_path(warehouse), progress=lambda line: echo(line, err=True))
    print_ingest_report(report)
    analyse_after(warehouse, report.run_id)


def copy_command(
    source: Annotated[str, typer.Argument(help="DuckDB file or DuckLake URL to copy from")],
    destination: Annotated[str, typer.Argument(help="DuckDB file or DuckLake URL to copy into (made if new)")],
    runs: Annotated[Optional[list[str]], typer.Option("--run", help="a run to copy (repeatable; default: all)")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Copy runs (raw rows, marts, triage) replacing them in the destination; row counts checked at the end."""
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb
    from tasks.warehouse.moving import copy_runs  # heavy: duckdb

    report = copy_runs(warehouse_path(source), warehouse_path(destination), runs)
    write_rows(["table", "rows"], sorted(report.rows_by_table.items()), fmt)
    echo(f"copied {len(report.runs)} run(s) into {warehouse_path(destination)}", err=True)


def maintain_command(
    warehouse: WarehouseOption = None,
    older_than_hours: Annotated[float, typer.Option(help="keep snapshots and files younger than this")] = 1.0,
) -> None:
    """Expire a lake's old snapshots and delete files nothing references (a killed ingest's); checkpoint a file."""
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb
    from tasks.warehouse.moving import maintain  # heavy: duckdb

    for line in maintain(warehouse_path(warehouse), older_than_hours):
        echo(line)
