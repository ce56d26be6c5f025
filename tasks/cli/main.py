"""The `perfcampaign` command: load bundles, query the warehouse, run the demo."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import duckdb
import typer

from tasks.cli.compare import compare_command
from tasks.cli.history import (
    analyse_after,
    changes_command,
    exclude_command,
    history_command,
    triage_command,
)
from tasks.cli.matrix import write_hooks, write_matrix
from tasks.cli.output import FormatOption, printable, write_rows
from tasks.cli.report import report_command, report_location
from tasks.cli.site import site_command
from tasks.cli.summary import print_ingest_report
from tasks.cli.validate import validate_command
from tasks.cli.warehouse import warehouse_app
from tasks.settings import DEMO_CAMPAIGN, WORK_DIR
from tasks.warehouse.connection import WarehouseError, open_warehouse, warehouse_path
from tasks.warehouse.models import model_sql

# Offline machines: Prefect's telemetry would only print errors; its first start migrates a database.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Performance-test campaigns end to end; every result queryable with SQL.",
)

WarehouseOption = Annotated[
    Optional[str],
    typer.Option("--warehouse", "-w", help="DuckDB file or DuckLake URL (default: $PERFCAMPAIGN_WAREHOUSE or ./perfcampaign.duckdb; see docs/scaling.md)"),
]


def fail(message: str) -> None:
    """Print an error to stderr and exit non-zero."""
    typer.echo(f"error: {printable(message, keep_lines=True)}", err=True)
    raise typer.Exit(code=1)


def _query(warehouse: Path | None, sql: str, params: dict | None = None) -> tuple[list[str], list[tuple]]:
    with open_warehouse(warehouse_path(warehouse)) as con:
        cursor = con.execute(sql, params)
        if cursor.description is None:  # a statement without a result (SET, PRAGMA...)
            return [], []
        return [d[0] for d in cursor.description], cursor.fetchall()


@app.command()
def ingest(
    bundle: Annotated[Path, typer.Argument(help="bundle folder (with run.yaml)")],
    warehouse: WarehouseOption = None,
) -> None:
    """Load a perflog bundle; re-ingesting a run_id replaces it in one transaction."""
    from tasks.warehouse.ingest import ingest_bundle  # heavy: pydantic, the readers

    report = ingest_bundle(bundle, warehouse_path(warehouse))
    print_ingest_report(report)
    analyse_after(warehouse, report.run_id)


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="SQL over the public marts (see docs/warehouse.md)")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
) -> None:
    """Run a read-only SQL query against the warehouse."""
    if not query.strip():
        fail("the query is empty")
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
    """The per-iteration table of a run (both sides, each host and all hosts), its verdicts, a matrix run's
    pivot (load level down, series across) and the stage hooks run per iteration."""
    params = {"run_id": run_id}
    columns, rows = _query(warehouse, model_sql("reports/show_iterations"), params)
    if not rows:
        fail(f"no run {run_id!r} with requests in {warehouse_path(warehouse)} (see `perfcampaign runs`)")
    write_rows(columns, rows, fmt, title=f"{run_id}: requests per iteration (times in ms)")
    _, ((verdict, status, reason),) = _query(warehouse, model_sql("reports/run_verdict"), params)
    if fmt == "table":
        line = f"{run_id}: {verdict}" + (f" (run {status}: {reason})" if verdict.startswith("RUN") else "")
        typer.echo("\n" + printable(line, keep_lines=True))
    columns, rows = _query(warehouse, model_sql("reports/show_verdicts"), params)
    if rows:
        typer.echo("")
        write_rows(columns, rows, fmt, title=f"{run_id}: requirements")
    write_matrix(run_id, _query(warehouse, model_sql("reports/show_matrix"), params)[1], fmt)
    write_hooks(run_id, *_query(warehouse, model_sql("reports/show_hooks"), params), fmt)
    show_soak(warehouse, run_id, fmt)


def show_soak(warehouse: Path | None, run_id: str, fmt: str) -> None:
    """A soak's part of `show`: where its load came from and its drift verdicts (mart soak_drift)."""
    columns, rows = _query(warehouse, model_sql("reports/report_soak"), {"run_id": run_id})
    if not rows:
        return
    soak = dict(zip(columns, rows[0]))
    if soak["source_run_id"] and fmt == "table":
        typer.echo("\n" + printable(
            f"{run_id}: soak at {soak['target_key']}={soak['target_value']:g}, {soak['share_of_max']:g} x "
            f"{soak['max_load_level']:g} of run {soak['source_run_id']} (its maximum {soak['max_calls_per_s']:.1f} "
            f"calls/s at iteration {soak['max_iteration']}: {soak['max_load']})"))
    columns, rows = _query(warehouse, model_sql("reports/show_soak"), {"run_id": run_id})
    if rows:
        typer.echo("")
        write_rows(columns, rows, fmt, title=f"{run_id}: soak drift per hour over {soak['windows']} windows")


app.command("report")(report_command)
app.command("compare")(compare_command)


def _overrides(campaign: Path, values: list[str]) -> dict:
    """`--set load.duration_s=5` pairs; values are YAML (`load.steps=[{vus: 1}]`), checked against the
    campaign file before Prefect starts (only durations, steps, load sizes and vars may change)."""
    import yaml

    from tasks.campaign.spec import load_campaign  # heavy: pydantic

    parsed = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            fail(f"--set {item!r}: expected KEY=VALUE, e.g. load.duration_s=30")
        try:
            parsed[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or "not valid YAML"
            fail(f"--set {key.strip()}: the value {value!r} is not valid YAML ({problem}); quote it: {key.strip()}='\"...\"'")
    load_campaign(campaign, parsed)
    return parsed


SetOption = Annotated[list[str], typer.Option("--set", help="override a campaign key: load.duration_s=30 (repeatable)")]
WorkOption = Annotated[Path, typer.Option(help="local work folder for bundles being collected")]


@app.command()
def run(
    campaign: Annotated[Path, typer.Argument(help="campaign file (see docs/campaign-format.md)")],
    overrides: SetOption = [],
    warehouse: WarehouseOption = None,
    work_dir: WorkOption = Path(WORK_DIR),
) -> None:
    """Run a campaign now through Prefect: stage up, iterations, collect, store, ingest, teardown."""
    extra = _overrides(campaign, overrides)  # a refused key fails now, before Prefect starts
    from flows.campaign import RunOverrides, campaign_flow  # heavy: Prefect takes seconds to import

    chosen = RunOverrides(extra=extra)
    typer.echo(campaign_flow(str(campaign), chosen, str(warehouse_path(warehouse)), str(work_dir)))


@app.command()
def demo(
    warehouse: WarehouseOption = None,
    overrides: SetOption = [],
    work_dir: WorkOption = Path(WORK_DIR),
) -> None:
    """Run the demo campaign (two JVM echo services, k6, vmstat, jstat) end to end and show the result."""
    extra = _overrides(DEMO_CAMPAIGN, overrides)
    from flows.campaign import RunOverrides, campaign_flow  # heavy: Prefect takes seconds to import

    typer.echo("running campaigns/demo.yaml: ~4 iterations of 20 s, under 3 minutes", err=True)
    campaign_file = DEMO_CAMPAIGN
    chosen = RunOverrides(extra=extra)
    run_id = campaign_flow(str(campaign_file), chosen, str(warehouse_path(warehouse)), str(work_dir))
    show(run_id, warehouse, "table")
    columns, rows = _query(warehouse, "select bundle_uri from runs where run_id = $run_id", {"run_id": run_id})
    target = warehouse_path(warehouse)
    typer.echo(f"\nbundle: {rows[0][0]}\nwarehouse: {target.resolve() if isinstance(target, Path) else target}")
    typer.echo(f"report: {report_location(run_id, warehouse)}")
    typer.echo(f"site: {(Path(work_dir) / 'site' / 'index.html').resolve()}")


@app.command()
def serve(
    campaigns: Annotated[Optional[list[Path]], typer.Argument(help="campaign files (default: campaigns/*.yaml)")] = None,
) -> None:
    """Serve the deployments: one scheduled per campaign file, plus `campaign/adhoc` for the Prefect UI."""
    from flows.deployments import serve_campaigns  # heavy: Prefect takes seconds to import

    serve_campaigns(campaigns)


app.command("validate")(validate_command)
app.command("history")(history_command)
app.command("changes")(changes_command)
app.command("triage")(triage_command)
app.command("exclude")(exclude_command)
app.command("site")(site_command)
app.add_typer(warehouse_app, name="warehouse")


def _known_errors() -> tuple[type[Exception], ...]:
    """The failures that are the input's fault, not a bug. Imported once something failed: their modules
    (pydantic, the readers) would cost every command its start-up, and one that raised is loaded anyway."""
    from tasks.bundle.manifest import ManifestError  # heavy: pydantic
    from tasks.campaign.spec import CampaignError  # heavy: pydantic
    from tasks.warehouse.ingest import IngestError  # heavy: pydantic, the readers
    from tasks.warehouse.sources.base import SourceError  # heavy: pydantic, the readers

    return IngestError, ManifestError, CampaignError, SourceError, WarehouseError, duckdb.Error, FileNotFoundError


def main() -> None:
    """Console entry point: known failures become one line on stderr and exit code 1."""
    try:
        app()
    except Exception as exc:
        if not isinstance(exc, _known_errors()):
            raise
        typer.echo(f"error: {printable(str(exc), keep_lines=True)}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
