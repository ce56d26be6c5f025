"""The `perfcampaign` command: load bundles, query the warehouse, run the demo."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import duckdb
import typer

from tasks.output import FORMATS, write_rows
from tasks.sqlmodels import model_sql
from tasks.warehouse import WarehouseError, open_warehouse, warehouse_path

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Performance-test campaigns end to end; every result queryable with SQL.",
)

WarehouseOption = Annotated[
    Optional[Path],
    typer.Option("--warehouse", "-w", help="DuckDB file (default: $PERFCAMPAIGN_WAREHOUSE or ./perfcampaign.duckdb)"),
]
FormatOption = Annotated[str, typer.Option("--format", "-f", help="table, csv or json")]


def fail(message: str) -> None:
    """Print an error to stderr and exit non-zero."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=1)


def _query(warehouse: Path | None, sql: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
    with open_warehouse(warehouse_path(warehouse)) as con:
        cursor = con.execute(sql, params)
        return [d[0] for d in cursor.description], cursor.fetchall()


@app.command()
def ingest(
    bundle: Annotated[Path, typer.Argument(help="bundle folder (with run.yaml)")],
    warehouse: WarehouseOption = None,
) -> None:
    """Load a perflog bundle; re-ingesting a run_id replaces it in one transaction."""
    from tasks.ingest import ingest_bundle
    from tasks.summary import print_ingest_report

    report = ingest_bundle(bundle, warehouse_path(warehouse))
    print_ingest_report(report)


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="SQL over the public marts (see docs/warehouse.md)")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
) -> None:
    """Run a read-only SQL query against the warehouse."""
    if fmt not in FORMATS:
        fail(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    columns, rows = _query(warehouse, query)
    write_rows(columns, rows, fmt)


@app.command()
def runs(warehouse: WarehouseOption = None, fmt: FormatOption = "table") -> None:
    """List the runs in the warehouse, newest first."""
    columns, rows = _query(warehouse, model_sql("reports/runs"))
    write_rows(columns, rows, fmt)


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="the run to show")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
) -> None:
    """The per-iteration table of a run (both sides, each host and all hosts) and its verdicts."""
    params = {"run_id": run_id}
    columns, rows = _query(warehouse, model_sql("reports/show_iterations"), params)
    if not rows:
        fail(f"no run {run_id!r} with requests in {warehouse_path(warehouse)} (see `perfcampaign runs`)")
    write_rows(columns, rows, fmt, title=f"{run_id}: requests per iteration (times in ms)")
    columns, rows = _query(warehouse, model_sql("reports/show_verdicts"), params)
    if rows:
        typer.echo("")
        write_rows(columns, rows, fmt, title=f"{run_id}: requirements")


@app.command()
def demo(
    warehouse: WarehouseOption = None,
    data: Annotated[Path, typer.Option(help="where bundles are kept")] = Path("perfcampaign-data"),
) -> None:
    """Run a real campaign on the embedded demo stage (JVM echo service + k6), ingest it and show it."""
    from tasks.demo_stage import record_echo_bundle, utc_now
    from tasks.ingest import ingest_bundle
    from tasks.summary import print_ingest_report

    typer.echo("recording a bundle: two JVM echo services, vmstat, jstat, k6 at 2, 6 and 18 VUs (~45 s)", err=True)
    bundle = record_echo_bundle(data / f"demo-{utc_now():%Y%m%dT%H%M%S}")
    report = ingest_bundle(bundle, warehouse_path(warehouse))
    print_ingest_report(report)
    show(report.run_id, warehouse, "table")
    typer.echo(f"\nbundle: {bundle}\nwarehouse: {warehouse_path(warehouse)}")


def main() -> None:
    """Console entry point: known failures become one line on stderr and exit code 1."""
    from tasks.ingest import IngestError
    from tasks.manifest import ManifestError
    from tasks.sources.base import SourceError

    try:
        app()
    except (IngestError, ManifestError, SourceError, WarehouseError, duckdb.Error, FileNotFoundError) as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
