"""Whether a warehouse's schema is the one this sql/ makes: writers make it only when it is not.

Making it runs every DDL file of sql/schema and remakes the public views (40-90 ms on a file, more on a
lake), which a writer would otherwise pay at every open: a nightly backfill opens one per run.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

import duckdb

from tasks.warehouse.models import ddl_names, load_models, model_sql, warehouse_tables

SCHEMA_KEY = "schema_fingerprint"
_CREATED_TABLE = re.compile(r"create table if not exists (\w+)", re.IGNORECASE)


def schema_fingerprint() -> str:
    """A hash of sql/schema and of the public views' SQL: when it changes, the schema is made again."""
    digest = hashlib.sha256()
    for name in ddl_names("schema"):
        digest.update(model_sql(name).encode())
    for model in load_models().values():
        if model.layer == "marts" and model.header.materialized == "view":
            digest.update(model.sql.encode())
    return digest.hexdigest()


def get_meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    exists = con.execute("select count(*) from duckdb_tables() where table_name = 'warehouse_meta' "
                         "and database_name = current_database()").fetchone()[0]
    if not exists:
        return None
    row = con.execute("select value from warehouse_meta where key = $key", {"key": key}).fetchone()
    return row[0] if row else None


def set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("delete from warehouse_meta where key = $key", {"key": key})
    con.execute("insert into warehouse_meta values ($key, $value)", {"key": key, "value": value})


def schema_tables() -> set[str]:
    """The base tables sql/schema/ makes."""
    return {name for ddl in ddl_names("schema") for name in _CREATED_TABLE.findall(model_sql(ddl))}


def schema_made(con: duckdb.DuckDBPyConnection, wanted: str, extra_tables: frozenset[str] = frozenset()) -> bool:
    """Whether this sql/ made the schema and its tables and public views (and `extra_tables`) are all still
    there (a user may drop one: the next writer makes it again)."""
    if get_meta(con, SCHEMA_KEY) != wanted:
        return False
    return schema_tables() | public_views() | extra_tables <= warehouse_tables(con)


def make_schema_once(con: duckdb.DuckDBPyConnection, wanted: str, make: Callable[[], None],
                     extra_tables: frozenset[str] = frozenset()) -> None:
    """`make` the schema unless `schema_made`; record `wanted` once every public view exists (one over a mart
    table waits for the table's first build, and the writers until then make the schema again)."""
    if schema_made(con, wanted, extra_tables):
        return
    make()
    if not mart_views_missing(con):
        set_meta(con, SCHEMA_KEY, wanted)


def public_views() -> set[str]:
    """The views of sql/marts (remade with the schema)."""
    return {model.name for model in load_models().values() if model.layer == "marts" and model.header.materialized == "view"}


def mart_views_missing(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a public view is not made yet (one over a mart table waits for the table's first build)."""
    made = {name for (name,) in con.execute("select view_name from duckdb_views() where database_name = current_database()")
            .fetchall()}
    return bool(public_views() - made)
