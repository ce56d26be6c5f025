"""The DuckDB warehouse: one file, one writer at a time, every run replaceable in one transaction.

DuckDB itself refuses a second read-write process, so the loader takes an advisory lock file first
and waits for it instead of failing: two ingests at once run one after the other. Readers share that
lock; a writer that waits for it first takes a second lock, the intent, which every new reader passes
through, so a waiting writer goes next instead of waiting for a moment without readers (overlapping
readers could delay it without bound). The writer's wait is bounded ($PERFCAMPAIGN_WRITER_WAIT_S).
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import duckdb

from tasks.bundle.printable import say
from tasks.settings import DEFAULT_WAREHOUSE, MEMORY_LIMIT, WRITER_WAIT_S
from tasks.warehouse.engines import (
    Lake,
    LakeSettingError,
    UNCHECKED_LOADS,
    attach_lake,
    in_lake,
    parse_warehouse,
)
from tasks.warehouse.functions import register
from tasks.warehouse.lake import ensure_lake_schema
from tasks.warehouse.models import (
    Model,
    build_model,
    drop_model,
    fingerprint,
    mart_build_order,
    run_ddl,
    warehouse_tables,
)
from tasks.warehouse.schema_state import make_schema_once, schema_fingerprint

# Base tables keyed by run_id that a re-ingest replaces; the marts' tables are added from their models.
BASE_RUN_TABLES = (
    "runs", "iterations", "requirements", "rejected_lines", "k6_summary_checks", "jmeter_summaries",
    "host_metric_sources", "host_sample_facts",
    "clock_skew", "expectation_results", "validations",
)


class WarehouseError(RuntimeError):
    """The warehouse cannot be opened or used as asked."""


def warehouse_path(explicit: str | os.PathLike | None = None) -> Path | Lake:
    """The warehouse: the explicit one, else $PERFCAMPAIGN_WAREHOUSE, else ./perfcampaign.duckdb; a file's
    path, or a DuckLake (`ducklake:...`, engines.py)."""
    return parse_warehouse(explicit or os.environ.get("PERFCAMPAIGN_WAREHOUSE") or DEFAULT_WAREHOUSE)


def writer_wait_s() -> float:
    """How long a writer waits for the warehouse: $PERFCAMPAIGN_WRITER_WAIT_S, else WRITER_WAIT_S."""
    given = os.environ.get("PERFCAMPAIGN_WRITER_WAIT_S")
    try:
        return float(given) if given else WRITER_WAIT_S
    except ValueError:
        raise WarehouseError(f"PERFCAMPAIGN_WRITER_WAIT_S={given!r}: expected seconds") from None


_SIZE = re.compile(r"\d+(\.\d+)? ?([KMGT]i?B|B|bytes)", re.IGNORECASE)  # DuckDB's memory sizes


def memory_limit() -> str:
    """DuckDB's memory limit on a writing connection: $PERFCAMPAIGN_MEMORY_LIMIT, else MEMORY_LIMIT."""
    return os.environ.get("PERFCAMPAIGN_MEMORY_LIMIT") or MEMORY_LIMIT


def _open_lock(lock_path: Path, path: Path, exclusive: bool) -> int | None:
    try:
        return os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exclusive:
            raise WarehouseError(f"cannot write next to the warehouse {path} (lock file {lock_path}): "
                                 f"{exc.strerror}") from None
        return None  # a reader in a folder nobody can write to: no writer can change the warehouse either


def _flock_within(fd: int, mode: int, path: Path, deadline: float | None) -> None:
    """Take the lock, saying once that we wait; past `deadline` (monotonic) raise a WarehouseError."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        say(f"waiting for the warehouse {path} (another perfcampaign process uses it)...")
    if deadline is None:
        fcntl.flock(fd, mode)
        return
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise WarehouseError(
                    f"gave up waiting for the warehouse {path} after {writer_wait_s():g} s: other perfcampaign "
                    "processes kept it (an ingest, or readers such as `perfcampaign sql`); try again later, or "
                    "wait longer with PERFCAMPAIGN_WRITER_WAIT_S=<seconds>") from None
            time.sleep(0.05)


@contextmanager
def _file_lock(path: Path, exclusive: bool) -> Iterator[None]:
    """Shared (reader) or exclusive (writer) lock on `<warehouse>.lock`, passing through `<warehouse>.intent`."""
    fds = [fd for fd in (_open_lock(path.with_name(path.name + suffix), path, exclusive)
                         for suffix in (".intent", ".lock")) if fd is not None]
    try:
        if len(fds) == 2:
            intent, lock = fds
            deadline = time.monotonic() + writer_wait_s() if exclusive else None
            mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
            _flock_within(intent, mode, path, deadline)  # a reader waits here while a writer waits or writes
            _flock_within(lock, mode, path, deadline)
            if not exclusive:
                fcntl.flock(intent, fcntl.LOCK_UN)  # readers hold the intent only on their way in
        yield
    finally:
        for fd in fds:
            os.close(fd)


def _configure(con: duckdb.DuckDBPyConnection, write: bool) -> None:
    con.execute("set TimeZone = 'UTC'")
    con.execute("set enable_progress_bar = false")  # progress is ours to print, on stderr
    # DuckDB 1.5 keeps a subplan a query repeats in memory, `as not materialized` or not: the `requests` view a
    # model reads two or three times was held whole (100 M requests: 15 GB). The models say what is held.
    con.execute("set disabled_optimizers = 'common_subplan'")
    if write:
        limit = _checked_memory_limit()
        make_schema(con)  # before the limit: a tiny one (1MB) would fail the commit of a schema change
        con.execute(f"set memory_limit = '{limit}'")
    run_ddl(con, "macros")  # expressions the models share, as temporary macros of this connection
    _forget_s3_settings(con)
    if not write:
        # A reader only reads the warehouse: no query of `perfcampaign sql` may write a file (COPY ... TO
        # over the warehouse itself) or read others, and none may turn that back on.
        con.execute("set enable_external_access = false")
        con.execute("set lock_configuration = true")


# httpfs copies AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN into these settings when it loads,
# where duckdb_settings() and current_setting() show them to any `perfcampaign sql`. S3 is reached through the
# temporary secret made from the same variables (engines._create_s3_secret), which duckdb_secrets() redacts.
S3_CREDENTIAL_SETTINGS = ("s3_access_key_id", "s3_secret_access_key", "s3_session_token")


def _forget_s3_settings(con: duckdb.DuckDBPyConnection) -> None:
    """Empty the S3 credential settings (once httpfs is loaded, a lake's): credentials live in secrets only."""
    names = {name for (name,) in con.execute("select name from duckdb_settings()").fetchall()}
    for name in S3_CREDENTIAL_SETTINGS:
        if name in names:  # a fixed name: only an extension's setting, never a value from input
            con.execute(f"set {name} = ''")


def _checked_memory_limit() -> str:
    """A writer's memory bound (PERFCAMPAIGN_MEMORY_LIMIT), checked: DuckDB's default is 80 % of RAM, which an
    operator that can hold all its rows takes. Past the limit DuckDB spills to its temp_directory
    (`<warehouse>.tmp` beside a warehouse file)."""
    limit = memory_limit()
    # checked here and written out: a bound parameter would import pandas on every writer's start (0.25 s on a
    # quiet machine, over 1 s at load 10)
    if not _SIZE.fullmatch(limit):
        raise WarehouseError(f"PERFCAMPAIGN_MEMORY_LIMIT={limit!r}: expected a size such as 3GB or 500MB")
    return limit


@contextmanager
def open_warehouse(path: Path | Lake, write: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection under the lock: exclusive for writers, shared for readers (which touch no other file)."""
    if isinstance(parse_warehouse(path), Lake):
        with _open_lake(parse_warehouse(path), write) as con:
            yield con
        return
    path = Path(path)
    if not write and not path.exists():
        raise WarehouseError(f"no warehouse at {path}: load a bundle first with `perfcampaign ingest BUNDLE`")
    if write:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WarehouseError(f"cannot create the folder of the warehouse {path}: {exc.strerror}") from None
    with _file_lock(path, exclusive=write):
        try:
            con = duckdb.connect(str(path), read_only=not write)
        except duckdb.Error as exc:
            raise WarehouseError(f"cannot open the warehouse {path}: {exc}") from None
        try:
            _configure(con, write)
            yield con
        finally:
            con.close()


@contextmanager
def _open_lake(lake: Lake, write: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection with the lake attached; a local catalog file is locked like a warehouse file."""
    if not write and not lake.exists():
        raise WarehouseError(f"no lake catalog at {lake.catalog}: load a bundle first with `perfcampaign ingest`")
    with _file_lock(lake.catalog_file, exclusive=write) if lake.catalog_file else nullcontext():
        con = duckdb.connect(config=UNCHECKED_LOADS)  # of files DuckDB checked in this process (engines.py)
        try:
            attach_lake(con, lake, write)
            _configure(con, write)
            if not write:
                # One snapshot for the whole command: the catalog is read once, not by every query's own
                # transaction (a report's 100 queries took 7 s), and every query sees the same runs.
                con.execute("begin transaction")
            yield con
        except LakeSettingError as exc:
            raise WarehouseError(str(exc)) from None
        finally:
            con.close()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """All the block's changes, or none of them: any exception (Ctrl-C included) rolls back and goes on."""
    con.execute("begin transaction")
    try:
        yield
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")


def commit_so_far(con: duckdb.DuckDBPyConnection) -> None:
    """Commit inside a `transaction` block, which goes on in a new transaction (and rolls back only that)."""
    con.execute("commit")
    con.execute("begin transaction")


def make_schema(con: duckdb.DuckDBPyConnection) -> None:
    """A writer's schema: made by `ensure_schema` only when this sql/ has not made it yet, or a table or
    view of it is gone (tasks/warehouse/schema_state.py)."""
    if in_lake(con):
        ensure_lake_schema(con, ensure_schema)
    else:
        make_schema_once(con, schema_fingerprint(), lambda: ensure_schema(con))


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the base tables and the public views; the marts' tables are made by their first build."""
    run_ddl(con, "schema")  # base_tables.sql first, then one file per tool
    order = mart_build_order()
    tables = set(_marts(order, views=False))
    existing = {row[0] for row in con.execute("select table_name from duckdb_tables() where not temporary").fetchall()}
    for model in order:
        # A view over a mart table (series over series_values) waits for the table's first build.
        if model.layer == "marts" and model.header.materialized == "view" and not (set(model.header.upstream) & tables) - existing:
            build_model(con, model.name)


def _marts(order: list[Model], views: bool) -> list[str]:
    """The marts of a build order that are views (remade on every writing connection), or else tables."""
    return [model.name for model in order if model.layer == "marts" and (model.header.materialized == "view") == views]


def _build_run_marts(con: duckdb.DuckDBPyConnection, order: list[Model], run_id: str,
                     then: Callable[[], None] | None = None) -> None:
    tables = warehouse_tables(con)
    for model in order:
        build_model(con, model.name, {"run_id": run_id}, tables)
    if then is not None:
        then()
    for model in order:
        if model.is_temporary:
            drop_model(con, model.name)


def refresh_marts(con: duckdb.DuckDBPyConnection, run_id: str, then: Callable[[], None] | None = None) -> None:
    """Rebuild the mart rows of one run from the models in `sql/marts/` (and the intermediates they read).

    `then` runs once that run's marts are built, while the intermediates they read are still there (the
    ingest's run totals read int_request_counts, dropped after).

    Marts are derived data: when a model's columns changed since the warehouse was made, every mart
    table is dropped and rebuilt for every run, so old runs never keep a stale shape.
    """
    register(con)
    order = mart_build_order()
    models_fingerprint = fingerprint(order)
    stored = con.execute("select value from warehouse_meta where key = 'marts_fingerprint'").fetchone()
    if stored and stored[0] == models_fingerprint:
        _build_run_marts(con, order, run_id, then)
        return
    for mart in _marts(order, views=False):
        con.execute(f"drop table if exists {mart}")
    for (each_run,) in con.execute("select run_id from runs order by started_at").fetchall():
        _build_run_marts(con, order, each_run, then if each_run == run_id else None)
    con.execute("delete from warehouse_meta where key = 'marts_fingerprint'")
    con.execute("insert into warehouse_meta values ('marts_fingerprint', $value)", {"value": models_fingerprint})


def delete_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Remove every row of a run (its requests through its sources)."""
    params = {"run_id": run_id}
    for facts in ("request_facts", "k6_metric_points"):
        con.execute(
            f"delete from {facts} where source_key in (select source_key from sources where run_id = $run_id)",
            params,
        )
    con.execute("delete from sources where run_id = $run_id", params)
    for table in _existing(con, (*BASE_RUN_TABLES, *_marts(mart_build_order(), views=False))):
        con.execute(f"delete from {table} where run_id = $run_id", params)


def _existing(con: duckdb.DuckDBPyConnection, tables: tuple[str, ...]) -> list[str]:
    existing = {row[0] for row in con.execute("select table_name from information_schema.tables").fetchall()}
    return [table for table in tables if table in existing]


STAGED_PREFIX = "~staged "


def staged_run_id(run_id: str) -> str:
    """The id a run's rows carry between an ingest's two transactions (ingest.py): read, not yet published. No
    manifest's run_id has a `~` or a space, so it is never a run's own."""
    return f"{STAGED_PREFIX}{run_id}"


def publish_staged_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Give a staged run's rows its own id (the rows of an earlier load of it deleted first). Only the tables read
    while staging hold it; their rows of one run are few (the requests are keyed by source)."""
    delete_run(con, run_id)
    for table in _existing(con, ("sources", *BASE_RUN_TABLES)):
        con.execute(f"update {table} set run_id = $run_id where run_id = $staged",
                    {"run_id": run_id, "staged": staged_run_id(run_id)})


def drop_staged_runs(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Remove the runs an ingest staged and never published (it died between its transactions); their ids."""
    staged = [row[0] for row in con.execute(
        "select run_id from runs where starts_with(run_id, $prefix) order by run_id", {"prefix": STAGED_PREFIX}
    ).fetchall()]
    for run_id in staged:
        delete_run(con, run_id)
    return staged
