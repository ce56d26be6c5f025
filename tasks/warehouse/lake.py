"""What a DuckLake writer does differently from a file's: its schema made once, source keys reserved, conflicts.

DuckLake commits optimistically: two transactions that delete from one table, or create one object, both
run and the second fails at commit ("Transaction conflict"). Writers of different new runs only insert and
commit side by side; what may collide (making the schema, the source-key counter, re-ingests) is retried.
DuckLake has no sequences: source keys come from the one row of `lake_source_keys`, reserved in a small
transaction of its own before the ingest's (a table of its own: DuckLake refuses an insert into a table
another writer deleted from, and the counter is deleted and inserted by every writer).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

import duckdb

from tasks.bundle.printable import say
from tasks.warehouse.engines import in_lake
from tasks.warehouse.schema_state import make_schema_once, schema_fingerprint, schema_made

T = TypeVar("T")
ATTEMPTS = 8
LAKE_TABLES = frozenset({"lake_source_keys"})  # a lake's own table beside the schema's


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


def ensure_lake_schema(con: duckdb.DuckDBPyConnection, ensure_schema: Callable[[duckdb.DuckDBPyConnection], None]) \
        -> None:
    """Make the tables, the public views and the key counter once (again only when sql/ changed them or one
    was dropped), in a transaction of their own that another writer's may beat (then checked again)."""
    wanted = schema_fingerprint()
    if schema_made(con, wanted, LAKE_TABLES):
        return

    def make() -> None:
        ensure_schema(con)
        con.execute("create table if not exists lake_source_keys (next_key bigint not null)")
        if not con.execute("select count(*) from lake_source_keys").fetchone()[0]:
            con.execute("insert into lake_source_keys select coalesce(max(source_key), 0) + 1 from sources")

    retry_on_conflict(lambda: committed(con, lambda: make_schema_once(con, wanted, make, LAKE_TABLES)),
                      "making the lake's tables")


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
