"""`perfcampaign run | demo | serve`: campaigns run now through Prefect, or served as deployments."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Optional

import typer

from tasks.cli.options import SetOption, WarehouseOption, debugging, fail
from tasks.cli.output import echo
from tasks.cli.query import query, show_command
from tasks.cli.report import report_location
from tasks.settings import DEMO_CAMPAIGN, WORK_DIR

WorkOption = Annotated[Path, typer.Option(help="local work folder for bundles being collected")]


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


def _console_without_tracebacks() -> None:
    """Prefect's console log prints a failed task's traceback, and the flow's again; without --debug its lines
    stay and the tracebacks go (the Prefect UI keeps them: only the terminal's handlers are changed)."""
    import logging

    if debugging():
        return
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in list(logging.root.manager.loggerDict)
                                      if name.startswith("prefect"))]
    for handler in {handler for logger in loggers for handler in logger.handlers}:
        if isinstance(handler, logging.StreamHandler):
            handler.format = partial(_without_traceback, handler.format)


def _without_traceback(format_record, record) -> str:
    """A log line as `format_record` writes it, without the record's traceback (kept for the other handlers)."""
    kept = record.exc_info, record.exc_text, record.stack_info
    record.exc_info = record.exc_text = record.stack_info = None
    try:
        return format_record(record)
    finally:
        record.exc_info, record.exc_text, record.stack_info = kept


def run_command(
    campaign: Annotated[Path, typer.Argument(help="campaign file (see docs/campaign-format.md)")],
    overrides: SetOption = [],
    warehouse: WarehouseOption = None,
    work_dir: WorkOption = Path(WORK_DIR),
) -> None:
    """Run a campaign now through Prefect: stage up, iterations, collect, store, ingest, teardown."""
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb

    extra = _overrides(campaign, overrides)  # a refused key fails now, before Prefect starts
    from flows.campaign import RunOverrides, campaign_flow  # heavy: Prefect takes seconds to import

    _console_without_tracebacks()
    chosen = RunOverrides(extra=extra)
    echo(campaign_flow(str(campaign), chosen, str(warehouse_path(warehouse)), str(work_dir)))


def demo_command(
    warehouse: WarehouseOption = None,
    overrides: SetOption = [],
    work_dir: WorkOption = Path(WORK_DIR),
) -> None:
    """Run the demo campaign (two JVM echo services, k6, vmstat, jstat) end to end and show the result."""
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb

    extra = _overrides(DEMO_CAMPAIGN, overrides)
    from flows.campaign import RunOverrides, campaign_flow  # heavy: Prefect takes seconds to import

    _console_without_tracebacks()
    echo("running campaigns/demo.yaml: ~4 iterations of 20 s, under 3 minutes", err=True)
    chosen = RunOverrides(extra=extra)
    run_id = campaign_flow(str(DEMO_CAMPAIGN), chosen, str(warehouse_path(warehouse)), str(work_dir))
    show_command(run_id, warehouse, "table")
    _, rows = query(warehouse, "select bundle_uri from runs where run_id = $run_id", {"run_id": run_id})
    target = warehouse_path(warehouse)
    echo(f"\nbundle: {rows[0][0]}\nwarehouse: {target.resolve() if isinstance(target, Path) else target}")
    echo(f"report: {report_location(run_id, warehouse)}")
    echo(f"site: {(Path(work_dir) / 'site' / 'index.html').resolve()}")


def serve_command(
    campaigns: Annotated[Optional[list[Path]], typer.Argument(help="campaign files (default: campaigns/*.yaml)")] = None,
) -> None:
    """Serve the deployments: one scheduled per campaign file, plus `campaign/adhoc` for the Prefect UI."""
    from flows.deployments import serve_campaigns  # heavy: Prefect takes seconds to import

    serve_campaigns(campaigns)
