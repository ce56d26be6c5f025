"""The `perfcampaign` command: every command registered here, in one style, grouped by what it serves.

Each command lives in the module of its group (query, campaign, history, warehouse, plus report and validate);
the options they share and the one error exit are in options.py. Heavy imports (pydantic, Prefect, pandas)
stay inside the commands that need them, so `--help` and the query commands start fast.
"""

from __future__ import annotations

import os

import typer

from tasks.cli import campaign, compare, history, query, report, site, validate, warehouse
from tasks.cli.help import MARKUP, GroupedHelp
from tasks.cli.options import DebugOption, exit_on_error, set_debug

# Offline machines: Prefect's telemetry would only print errors; its first start migrates a database.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")

app = typer.Typer(
    cls=GroupedHelp,
    rich_markup_mode=MARKUP,  # plain text unless asked (help.py)
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,  # a failure is one line (options.exit_on_error); --debug prints the traceback
    help="Performance-test campaigns end to end; every result queryable with SQL.",
)
warehouse_app = typer.Typer(cls=GroupedHelp, rich_markup_mode=MARKUP, no_args_is_help=True,
                            help="Copy runs between warehouses; clean a lake's old files.")


@app.callback()
def _global_options(debug: DebugOption = False) -> None:
    set_debug(debug)


COMMANDS = {
    "query": {"sql": query.sql_command, "runs": query.runs_command, "show": query.show_command,
              "compare": compare.compare_command, "report": report.report_command},
    "campaign": {"run": campaign.run_command, "demo": campaign.demo_command, "serve": campaign.serve_command},
    "history": {"history": history.history_command, "changes": history.changes_command,
                "triage": history.triage_command, "exclude": history.exclude_command,
                "site": site.site_command},
    "warehouse": {"ingest": warehouse.ingest_command, "validate": validate.validate_command},
}
for panel, commands in COMMANDS.items():
    for name, command in commands.items():
        app.command(name, rich_help_panel=panel)(command)
warehouse_app.command("copy")(warehouse.copy_command)
warehouse_app.command("maintain")(warehouse.maintain_command)
app.add_typer(warehouse_app, name="warehouse", rich_help_panel="warehouse")


def main() -> None:
    """Console entry point: a failure ends in one line on stderr and a documented exit code (options.py)."""
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - every failure ends the same way; a bug gets its own code
        exit_on_error(exc)


if __name__ == "__main__":
    main()
