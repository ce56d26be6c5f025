"""What a DuckLake writer does differently from a file's: its schema made once, source keys reserved, conflicts.

DuckLake commits optimistically: two transactions that delete from one table, or create one object, both
run and the second fails at commit ("Transaction conflict"). Writers of different new runs only insert and
commit side by side; what may collide (making the schema, the source-key counter, re-ingests) is retried.
DuckLake has no sequences: source keys come from the one row of `lake_source_keys`, reserved in a small
transaction of its own before the ingest's (a table of its own: DuckLake refuses an insert into a table
another writer deleted from, and the counter is deleted and inserted by every writer).
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Callable
from typing import TypeVar

import duckdb

from tasks.bundle.printable import say
from tasks.warehouse.engines import in_lake
from tasks.warehouse.models import ddl_names, load_models, model_sql, warehouse_tables

T = TypeVar("T")
ATTEMPTS = 8
_CREATED_TABLE = re.compile(r"create table if not exists (\w+)", re.IGNORECASE)


def is_conflict(exc: BaseException) -> bool:
    """A commit refused for a concurrent writer's, or an object another writer made since this one looked."""
    return isinstance(exc, duckdb.TransactionException) and "conflict" in str(exc) or \
        isinstance(exc, duckdb.CatalogException) and "already exists" in str(exc)


def committed(con: duckdb.DuckDBPyConnection, work: Callable[[], T]) -> T:
    """`work` in a transaction of its own: committed, or rolled back on any exception."""
    con.execute("begin transaction")
    try:
        result = work()
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")
    return result


def retry_on_conflict(work: Callable[[], T], what: str) -> T:
    """Run `work` (one whole transaction) again while DuckLake refuses its commit for a concurrent writer's."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return work()
        except duckdb.Error as exc:
            if not is_conflict(exc) or attempt == ATTEMPTS:
                raise
            say(f"{what}: another writer committed first; again ({attempt}/{ATTEMPTS - 1})")
            time.sleep(random.uniform(0.05, 0.3) * attempt)
    raise AssertionError("unreachable")


def _schema_fingerprint() -> str:
    digest = hashlib.sha256()
    for name in ddl_names("schema"):
        digest.update(model_sql(name).encode())
    for model in load_models().values():
        if model.layer == "marts" and model.header.materialized == "view":
            digest.update(model.sql.encode())
    return digest.hexdigest()


def _meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    exists = con.execute("select count(*) from duckdb_tables() where table_name = 'warehouse_meta' "
                         "and database_name = current_database()").fetchone()[0]
    if not exists:
        return None
    row = con.execute("select value from warehouse_meta where key = $key", {"key": key}).fetchone()
    return row[0] if row else None


def _set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("delete from warehouse_meta where key = $key", {"key": key})
    con.execute("insert into warehouse_meta values ($key, $value)", {"key": key, "value": value})


def _schema_tables() -> set[str]:
    """The base tables sql/schema/ makes (and the lake's key counter)."""
    return {name for ddl in ddl_names("schema") for name in _CREATED_TABLE.findall(model_sql(ddl))} | {"lake_source_keys"}


def _made(con: duckdb.DuckDBPyConnection, wanted: str) -> bool:
    """Whether this sql/ made the schema and every base table is still there (a user may drop one: the next
    writer makes it again, as a file warehouse's does)."""
    if _meta(con, "schema_fingerprint") != wanted:
        return False
    return _schema_tables() <= warehouse_tables(con)


def ensure_lake_schema(con: duckdb.DuckDBPyConnection, ensure_schema: Callable[[duckdb.DuckDBPyConnection], None]) \
        -> None:
    """Make the tables and public views once (and again only when sql/ changed them or a table was dropped),
    not on every writer."""
    wanted = _schema_fingerprint()
    if _made(con, wanted):
        return

    def make() -> None:
        if _made(con, wanted):
            return  # another writer made it while this one waited
        ensure_schema(con)
        con.execute("create table if not exists lake_source_keys (next_key bigint not null)")
        if not con.execute("select count(*) from lake_source_keys").fetchone()[0]:
            con.execute("insert into lake_source_keys select coalesce(max(source_key), 0) + 1 from sources")
        if _mart_views_missing(con):
            return  # a view over a mart table not built yet (series): made by a writer after its first build
        _set_meta(con, "schema_fingerprint", wanted)

    retry_on_conflict(lambda: committed(con, make), "making the lake's tables")


def _mart_views_missing(con: duckdb.DuckDBPyConnection) -> bool:
    views = {model.name for model in load_models().values() if model.layer == "marts" and model.header.materialized == "view"}
    made = {name for (name,) in con.execute("select view_name from duckdb_views() where database_name = current_database()")
            .fetchall()}
    return bool(views - made)


def reserve_source_keys(con: duckdb.DuckDBPyConnection, count: int) -> list[int]:
    """`count` source keys no other writer gets: the file's sequence, or the lake's counter row."""
    if not in_lake(con):
        return [key for (key,) in con.execute("select nextval('source_key_seq') from range($n)", {"n": count})
                .fetchall()]

    def reserve() -> list[int]:
        first = con.execute("select next_key from lake_source_keys").fetchone()[0]
        con.execute("update lake_source_keys set next_key = next_key + $count", {"count": count})
        return list(range(first, first + count))

    return retry_on_conflict(lambda: committed(con, reserve), "reserving source keys")
