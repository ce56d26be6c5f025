"""`perfcampaign history`, `changes`, `triage` and `exclude`: the nightly history of a campaign (docs/history.md)."""

from __future__ import annotations

import sys
from datetime import date
from typing import Annotated, Optional

import typer

from tasks.cli.options import EXIT_REGRESSION, FormatOption, WarehouseOption, fail
from tasks.cli.output import echo, write_rows


def _rows(con, name: str, params: dict) -> tuple[list[str], list[tuple]]:
    from tasks.warehouse.models import model_sql  # heavy: duckdb

    cursor = con.execute(model_sql(f"reports/{name}"), params)
    return [d[0] for d in cursor.description], cursor.fetchall()


def history_command(
    campaign: Annotated[str, typer.Argument(help="the campaign whose history to show")],
    scenario: Annotated[Optional[str], typer.Option(help="only this scenario")] = None,
    metric: Annotated[Optional[str], typer.Option(help="only this metric (p95_ms, calls_per_s, error_rate, ...)")] = None,
    side: Annotated[Optional[str], typer.Option(help="server, client, host or jvm")] = None,
    iteration: Annotated[Optional[int], typer.Option(help="only this iteration index")] = None,
    label: Annotated[Optional[str], typer.Option(help="'(all)' or one label")] = None,
    host: Annotated[Optional[str], typer.Option(help="'(all)' or one host")] = None,
    last: Annotated[int, typer.Option(help="the last N runs of each series", min=1)] = 60,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
) -> None:
    """A campaign's series, newest last, with change points, outliers, exclusions and plan changes marked."""
    from tasks.history.options import campaign_options  # heavy: duckdb
    from tasks.warehouse.connection import open_warehouse, warehouse_path  # heavy: duckdb

    filters = {"campaign": campaign, "scenario": scenario, "metric": metric, "side": side, "iteration": iteration,
               "label": label, "host": host}
    with open_warehouse(warehouse_path(warehouse)) as con:
        if not con.execute("select count(*) from runs where campaign = $c", {"c": campaign}).fetchone()[0]:
            fail(f"no campaign {campaign!r} in {warehouse_path(warehouse)} (see `perfcampaign runs`)")
        settings = campaign_options(con, campaign)
        columns, rows = _rows(con, "history_table", {**filters, "last": last})
        _, plans = _rows(con, "history_plans", filters)
    if not rows:
        fail(f"no series of {campaign} match the filters")
    for scenario_name, plan_id, plan, series, most, fewest in plans:
        enough = "" if fewest >= settings.min_runs else (
            f"; {'every' if most < settings.min_runs else 'some'} series with fewer than the {settings.min_runs} "
            f"comparable runs needed ({fewest} at least): no change is claimed on those")
        echo(f"{scenario_name or '-'} plan {plan_id} ({plan}): {series} series, up to {most} comparable "
                   f"runs{enough}", err=True)
    if len(plans) > 1:
        echo("runs of another iteration plan are another series (marked 'plan changed')", err=True)
    title = ""
    if fmt == "table":
        columns, rows, title = _varying(columns, rows)
    write_rows(columns, rows, fmt, out=sys.stdout, title=title)


def _varying(columns: list[str], rows: list[tuple]) -> tuple[list[str], list[tuple], str]:
    """For the terminal: columns with one value in every row go into the title."""
    constant = [i for i, name in enumerate(columns)
                if name not in ("value", "calls", "note", "run_id", "run_started_at") and len({row[i] for row in rows}) == 1]
    title = " ".join(f"{columns[i]}={rows[0][i]}" for i in constant)
    kept = [i for i in range(len(columns)) if i not in constant]
    return [columns[i] for i in kept], [tuple(row[i] for i in kept) for row in rows], title


EVENT_COLUMNS = ["event_id", "scenario", "run_id", "kind", "direction", "series", "sides", "metrics", "change_pct",
                 "status", "found_by", "label_changes"]
SERIES_COLUMNS = ["change_id", "scenario", "side", "host", "iteration", "label", "metric", "run_id", "change_pct",
                  "direction", "kind", "status", "label_changes"]


def changes_command(
    campaign: Annotated[Optional[str], typer.Option(help="only this campaign")] = None,
    since: Annotated[Optional[str], typer.Option(help="only changes at runs started on or after DATE (YYYY-MM-DD)")] = None,
    status: Annotated[Optional[str], typer.Option(help="new, pending, quiet, acknowledged, expected, invalid or "
                                                  "mixed")] = None,
    fail_on: Annotated[Optional[str], typer.Option("--fail-on", help="regression: exit 3 when an untriaged "
                                                   "regression is listed")] = None,
    series: Annotated[bool, typer.Option("--series", help="a row per series instead of per event")] = False,
    event: Annotated[Optional[str], typer.Option(help="only the series of this event (implies --series)")] = None,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = "table",
) -> None:
    """Events (the change points and outliers of one shift, grouped), regressions first; for CI with --fail-on."""
    from tasks.warehouse.connection import open_warehouse, warehouse_path  # heavy: duckdb

    if fail_on not in (None, "regression"):
        raise typer.BadParameter(f"{fail_on!r}: expected regression", param_hint="--fail-on")
    if status not in (None, "new", "pending", "quiet", "acknowledged", "expected", "invalid", "mixed"):
        raise typer.BadParameter(f"{status!r}: expected new, pending, quiet, acknowledged, expected, invalid or mixed "
                                 "(an event whose series were triaged differently)", param_hint="--status")
    try:
        since_date = date.fromisoformat(since) if since else None
    except ValueError:
        raise typer.BadParameter(f"{since!r}: expected a date YYYY-MM-DD", param_hint="--since") from None
    per_series = series or event is not None
    filters = {"campaign": campaign, "since": since_date, "status": status}
    with open_warehouse(warehouse_path(warehouse)) as con:
        if per_series:
            columns, rows = _rows(con, "history_changes", {**filters, "event": event})
        else:
            columns, rows = _rows(con, "history_events", filters)
    shown = columns if fmt != "table" else SERIES_COLUMNS if per_series else EVENT_COLUMNS
    index = [columns.index(name) for name in shown]
    what = "change points and outliers" if per_series else "events (triage one with `perfcampaign triage EVENT_ID`)"
    write_rows(shown, [tuple(row[i] for i in index) for row in rows], fmt, out=sys.stdout,
               title=f"{len(rows)} {what}" if fmt == "table" else "")
    records = [dict(zip(columns, row)) for row in rows]
    untriaged = [r for r in records if (r["direction"], r["status"], r["kind"]) == ("regression", "new", "change")]
    if fail_on and untriaged:
        what = "change points" if per_series else "events"
        echo(f"{len(untriaged)} untriaged regression {what} (triage them with `perfcampaign triage ID`)",
                   err=True)
        raise typer.Exit(code=EXIT_REGRESSION)


def triage_command(
    identifier: Annotated[str, typer.Argument(metavar="ID", help="an event, or one change point (see "
                                              "`perfcampaign changes [--series]`)")],
    acknowledge: Annotated[bool, typer.Option("--acknowledge", help="a real change, being looked at")] = False,
    expected: Annotated[bool, typer.Option("--expected", help="a change that was meant (a new feature, a bigger test)")] = False,
    invalid: Annotated[bool, typer.Option("--invalid", help="not a change of the system under test")] = False,
    note: Annotated[Optional[str], typer.Option(help="why")] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Set the status of an event (all its change points) or of one change point; it survives re-analysis,
    re-ingest and mart rebuilds."""
    chosen = [name for name, flag in (("acknowledged", acknowledge), ("expected", expected), ("invalid", invalid)) if flag]
    if len(chosen) != 1:
        raise typer.BadParameter("give exactly one of --acknowledge, --expected, --invalid")
    from tasks.history.analysis import history_writer  # heavy: the analysis (scipy, pandas)
    from tasks.history.options import HistoryError  # heavy: duckdb
    from tasks.history.triage import triage_change  # heavy: the analysis (scipy, pandas)
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb

    try:
        with history_writer(warehouse_path(warehouse)) as con:
            count = triage_change(con, identifier, chosen[0], note)
    except HistoryError as exc:
        fail(str(exc))
    echo(f"{identifier}: {chosen[0]} ({count} change point{'s' if count != 1 else ''})")


def exclude_command(
    run_id: Annotated[str, typer.Argument(help="the run to leave out of every series")],
    note: Annotated[str, typer.Option(help="why (required)")],
    warehouse: WarehouseOption = None,
) -> None:
    """Mark a run invalid: it leaves every series of its campaign, which is re-analysed."""
    from tasks.history.analysis import history_writer  # heavy: the analysis (scipy, pandas)
    from tasks.history.options import HistoryError  # heavy: duckdb
    from tasks.history.triage import exclude_run  # heavy: the analysis (scipy, pandas)
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb

    path = warehouse_path(warehouse)
    if not path.exists():
        fail(f"no warehouse at {path}: load a bundle first with `perfcampaign ingest BUNDLE`")
    try:
        with history_writer(path) as con:
            outcome = exclude_run(con, run_id, note)
    except HistoryError as exc:
        fail(str(exc))
    echo(f"{run_id}: excluded")
    echo(outcome.line(), err=True)


def analyse_after(warehouse: str | None, run_id: str) -> None:
    """After an ingest or a validation: re-analyse the run's campaign and say what it found, on stderr."""
    from tasks.history.analysis import analyse_run  # heavy: scipy, pandas
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb

    outcome = analyse_run(warehouse_path(warehouse), run_id)
    echo(outcome.line(), err=True)
    for event in outcome.new_regressions:
        echo(f"  new regression {event['event_id']}: {event['series']} series ({event['sides']}: "
                   f"{event['metrics']}), median {_pct(event['change_pct'])} at {event['run_id']}"
                   + (f" ({event['label_changes']})" if event["label_changes"] else ""), err=True)


def _pct(value: float | None) -> str:
    return "from 0" if value is None else f"{value:+.1f} %"
