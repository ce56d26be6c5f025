"""`perfcampaign report`: rebuild a run's report from the warehouse at any time."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from tasks.cli.options import WarehouseOption, fail
from tasks.cli.output import echo


def report_command(
    run_id: Annotated[str, typer.Argument(help="the run to report on")],
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="folder (default: ./perfcampaign-reports/RUN_ID)")] = None,
    warehouse: WarehouseOption = None,
    baseline: Annotated[Optional[str], typer.Option(help="compare with this run (default: the previous passing run)")] = None,
    no_baseline: Annotated[bool, typer.Option("--no-baseline", help="leave the comparison out")] = False,
    validation_page: Annotated[Optional[str], typer.Option(help="link this validation page (path or URL)")] = None,
    publish: Annotated[bool, typer.Option(help="also put it next to the bundle in its store and link it from the run")] = False,
) -> None:
    """Write report.html, summary.md, summary.json and junit.xml of a run; print the report's path."""
    from tasks.report.build import build_report, record_report  # heavy: pandas, matplotlib
    from tasks.report.build import publish as put  # heavy: pandas, matplotlib
    from tasks.report.data import ReportError  # heavy: pandas, matplotlib
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb

    path = warehouse_path(warehouse)
    folder = out or Path("perfcampaign-reports") / run_id
    try:
        files = build_report(path, run_id, folder, baseline, not no_baseline, validation_page)
    except ReportError as exc:
        fail(str(exc))
    if publish:
        uri = put(files, _store_of(files.data.run["bundle_uri"], run_id))
        record_report(path, run_id, uri)
        echo(f"published: {uri}", err=True)
    echo(str(files.path("html").resolve()))


def _store_of(bundle_uri: str, run_id: str):
    """The store a bundle URI lives in (`<root>/<run_id>`), with default settings (no custom S3 endpoint)."""
    from tasks.store.base import StoreConfig  # heavy: pydantic
    from tasks.store.factory import open_store  # heavy: pydantic, boto3
    root, _, last = bundle_uri.rstrip("/").rpartition("/")
    if last != run_id or not root:
        fail(f"the bundle {bundle_uri} is not stored as <store>/{run_id}: nothing to publish next to")
    return open_store(StoreConfig(uri=root))


def report_location(run_id: str, warehouse: str | None = None) -> str:
    """Where the run's latest report is (a path for local files), or how to make one."""
    from tasks.report.build import as_local_path, latest_report  # heavy: pandas, matplotlib
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb
    uri = latest_report(warehouse_path(warehouse), run_id)
    return as_local_path(uri) if uri else f"none yet (make one with `perfcampaign report {run_id}`)"
