"""`perfcampaign validate RUN_ID`: run the data expectations on a stored run and print what they found."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from tasks.cli.history import analyse_after
from tasks.cli.options import FormatOption, WarehouseOption, fail
from tasks.cli.output import echo, write_rows


def validate_command(
    run_id: Annotated[str, typer.Argument(help="the run to validate (see `perfcampaign runs`)")],
    warehouse: WarehouseOption = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="folder for the validation page (validation.html)")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Check a run's data against the suites in expectations/; exit 1 when a critical expectation fails."""
    echo(f"validating {run_id} (Great Expectations takes a few seconds to load)", err=True)
    from tasks.validate.run import ValidationError, validate_run  # heavy: Great Expectations, pandas
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb
    try:
        summary = validate_run(warehouse_path(warehouse), run_id, out)
    except ValidationError as exc:
        fail(str(exc))
    columns = ["suite", "expectation", "severity", "success", "observed"]
    rows = [(o.suite, o.expectation, o.severity, o.success, o.observed) for o in summary.outcomes]
    write_rows(columns, rows, fmt, out=sys.stdout, title=f"{run_id}: data expectations")
    verdict = "passes" if summary.success else "FAILS"
    echo(f"{run_id}: the data {verdict} its expectations ({summary.evaluated} evaluated, "
               f"{len(summary.failed)} failed, {len(summary.warnings)} warnings)", err=True)
    if summary.page:
        echo(f"validation page: {summary.page}", err=True)
    analyse_after(warehouse, run_id)  # a run whose data failed leaves the history
    if not summary.success:
        raise typer.Exit(code=1)
