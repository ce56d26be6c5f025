"""The DuckDB warehouse: one file, one writer at a time, every run replaceable in one transaction.

DuckDB itself refuses a second read-write process, so the loader takes an advisory lock file first
and waits for it instead of failing: two ingests at once run one after the other.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from tasks.settings import DEFAULT_WAREHOUSE
from tasks.warehouse.functions import register
from tasks.warehouse.models import model_sql, models_in

# Intermediate models materialised (as temp tables, for one run) before the marts that read them.
INTERMEDIATE_TABLES = ("int_request_stats", "int_health_thresholds", "int_sample_windows")
# Public marts in build order (later ones read earlier ones). Views are rebuilt on every open.
MART_VIEWS = ("requests", "host_samples")
MART_TABLES = (
    "iteration_stats",
    "iteration_status_stats",
    "iteration_summary",
    "minute_stats",
    "verdicts",
    "host_iteration_stats",
    "jvm_iteration_stats",
    "container_stats",
    "health_findings",
    "capacity",
    "client_server_gap",
    "conclusions",
)
# Tables keyed by run_id that a re-ingest replaces (marts included).
RUN_TABLES = (
    "runs", "iterations", "requirements", "rejected_lines", "k6_summary_checks", "jmeter_summaries",
    "host_metric_sources", "host_sample_facts",
    "clock_skew", "expectation_results", "validations",
) + MART_TABLES


class WarehouseError(RuntimeError):
    """The warehouse cannot be opened or used as asked."""


def warehouse_path(explicit: str | os.PathLike | None = None) -> Path:
    """The warehouse file: the explicit one, else $PERFCAMPAIGN_WAREHOUSE, else ./perfcampaign.duckdb."""
    return Path(explicit or os.environ.get("PERFCAMPAIGN_WAREHOUSE") or DEFAULT_WAREHOUSE)


@contextmanager
def _file_lock(path: Path, exclusive: bool) -> Iterator[None]:
    lock_path = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exclusive:
            raise WarehouseError(f"cannot write next to the warehouse {path} (lock file {lock_path}): "
                                 f"{exc.strerror}") from None
        yield  # a reader in a folder nobody can write to: no writer can change the warehouse either
        return
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    try:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for the warehouse {path} (another perfcampaign process uses it)...", file=sys.stderr)
            fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)


def _configure(con: duckdb.DuckDBPyConnection, write: bool) -> None:
    con.execute("set TimeZone = 'UTC'")
    con.execute("set enable_progress_bar = false")  # progress is ours to print, on stderr
    if write:
        ensure_schema(con)
    for name in models_in("macros"):  # expressions the models share, as temporary macros of this connection
        con.execute(model_sql(name))
    if not write:
        # A reader only reads the warehouse: no query of `perfcampaign sql` may write a file (COPY ... TO
        # over the warehouse itself) or read others, and none may turn that back on.
        con.execute("set enable_external_access = false")
        con.execute("set lock_configuration = true")


@contextmanager
def open_warehouse(path: Path, write: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection under the lock: exclusive for writers, shared for readers (which touch no other file)."""
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
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """All the block's changes, or none of them: any exception (Ctrl-C included) rolls back and goes on."""
    con.execute("begin transaction")
    try:
        yield
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create base tables and public views; mart tables are made on first use."""
    for name in models_in("schema"):  # base_tables.sql first, then one file per tool
        con.execute(model_sql(name))
    for view in MART_VIEWS:
        con.execute(f"create or replace view {view} as {model_sql('marts/' + view)}")


def _table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    query = "select count(*) from information_schema.tables where table_schema = 'main' and table_name = $name"
    return con.execute(query, {"name": name}).fetchone()[0] > 0


def _models_fingerprint() -> str:
    """A hash of every model the marts are built from: when it changes, the marts are rebuilt."""
    digest = hashlib.sha256()
    for name in models_in("macros"):
        digest.update(model_sql(name).encode())
    for name in INTERMEDIATE_TABLES:
        digest.update(model_sql(f"intermediate/{name}").encode())
    for name in MART_TABLES:
        digest.update(model_sql(f"marts/{name}").encode())
    return digest.hexdigest()


def _build_run_marts(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    params = {"run_id": run_id}
    for model in INTERMEDIATE_TABLES:
        con.execute(f"create or replace temp table {model} as {model_sql('intermediate/' + model)}", params)
    for mart in MART_TABLES:
        sql = model_sql(f"marts/{mart}")
        if not _table_exists(con, mart):
            con.execute(f"create table {mart} as select * from ({sql}) limit 0", params)
        con.execute(f"delete from {mart} where run_id = $run_id", params)
        con.execute(f"insert into {mart} by name {sql}", params)
    for model in INTERMEDIATE_TABLES:
        con.execute(f"drop table {model}")


def refresh_marts(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Rebuild the mart rows of one run from the models in `sql/marts/`.

    Marts are derived data: when a model's columns changed since the warehouse was made, every mart
    table is dropped and rebuilt for every run, so old runs never keep a stale shape.
    """
    register(con)
    fingerprint = _models_fingerprint()
    stored = con.execute("select value from warehouse_meta where key = 'marts_fingerprint'").fetchone()
    if stored and stored[0] == fingerprint:
        _build_run_marts(con, run_id)
        return
    for mart in MART_TABLES:
        con.execute(f"drop table if exists {mart}")
    for (each_run,) in con.execute("select run_id from runs order by started_at").fetchall():
        _build_run_marts(con, each_run)
    con.execute("delete from warehouse_meta where key = 'marts_fingerprint'")
    con.execute("insert into warehouse_meta values ('marts_fingerprint', $value)", {"value": fingerprint})


def delete_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Remove every row of a run (its requests through its sources)."""
    params = {"run_id": run_id}
    con.execute(
        "delete from request_facts where source_key in (select source_key from sources where run_id = $run_id)",
        params,
    )
    con.execute("delete from sources where run_id = $run_id", params)
    existing = {row[0] for row in con.execute("select table_name from information_schema.tables").fetchall()}
    for table in RUN_TABLES:
        if table in existing:
            con.execute(f"delete from {table} where run_id = $run_id", params)
