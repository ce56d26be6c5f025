"""The options the commands share, each declared once with one help text, and the one error exit.

Exit codes (docs/cli.md): 0 done; 1 an expected failure (bad input, a missing run, a warehouse, store or
stage that cannot be used), told in one line `error: ...` on stderr; 2 a usage error (an unknown option, a
wrong value: Typer's); 3 `changes --fail-on regression` found an untriaged regression; 70 an unexpected
failure (a bug), one line too. The traceback is printed only with the global `--debug`.
"""

from __future__ import annotations

import traceback
from typing import Annotated, NoReturn, Optional

import typer

from tasks.cli.output import FORMATS, echo

EXIT_FAILED, EXIT_REGRESSION, EXIT_BUG = 1, 3, 70  # and 2, a usage error: Typer's own
_debug = False  # set by the global --debug (main.py's callback)


def _check_format(value: str) -> str:
    if value not in FORMATS:
        raise typer.BadParameter(f"{value!r}: expected one of {', '.join(FORMATS)}")
    return value


WarehouseOption = Annotated[Optional[str], typer.Option(
    "--warehouse", "-w", help="DuckDB file or DuckLake URL (default: $PERFCAMPAIGN_WAREHOUSE or ./perfcampaign.duckdb; "
                              "see docs/scaling.md)")]
# The --format option of every command that prints rows; a wrong one is a usage error (exit 2).
FormatOption = Annotated[str, typer.Option("--format", "-f", help="table, csv or json", callback=_check_format)]
SetOption = Annotated[list[str], typer.Option("--set", help="override a campaign key: load.duration_s=30 (repeatable)")]
DebugOption = Annotated[bool, typer.Option("--debug", envvar="PERFCAMPAIGN_DEBUG",
                                           help="print the traceback of a failure (before the command: perfcampaign --debug run ...)")]


def set_debug(debug: bool) -> None:
    """Remember the global --debug for `exit_on_error`."""
    global _debug
    _debug = debug


def debugging() -> bool:
    """Whether the global --debug was given."""
    return _debug


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """THE error exit: `error: message` in one escaped line (or the message's lines) on stderr, then `code`."""
    echo(f"error: {message}", err=True)
    raise typer.Exit(code=code)


def _expected(exc: BaseException) -> bool:
    """A failure that is the input's or the surroundings' (ours, DuckDB's, the file system's), not a bug. Told by
    where its class is defined: importing each error class here (duckdb's too) would cost every command its
    start-up, `--help` included."""
    classes = type(exc).__mro__
    project = any(cls.__module__.split(".")[0] in ("tasks", "flows") for cls in classes)
    duckdb_error = any((cls.__module__, cls.__name__) == ("_duckdb", "Error") for cls in classes)
    return project or duckdb_error or isinstance(exc, OSError)


def exit_on_error(exc: Exception) -> NoReturn:
    """The end of a command that raised: with --debug the traceback, else one line; then EXIT_FAILED for an
    expected failure, EXIT_BUG for any other."""
    expected = _expected(exc)
    if _debug:
        echo("".join(traceback.format_exception(exc)).rstrip("\n"), err=True)
    elif expected:
        echo(f"error: {str(exc) or type(exc).__name__}", err=True)
    else:
        echo(f"error: unexpected {type(exc).__name__}: {exc} (a bug; run again with --debug for the traceback)", err=True)
    raise SystemExit(EXIT_FAILED if expected else EXIT_BUG)
