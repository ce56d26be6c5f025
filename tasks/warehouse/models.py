"""The model runner: every SQL model in `sql/` declares itself in its header (model_header.py); this builds it.

A model is one bare `select` in `sql/<layer>/<name>.sql` that makes the object `<name>`. Where it lives follows
from its layer: `staging/` and `intermediate/` make temporary views and tables of the connection
(one source's rows, one run's statistics), `base/` appends to the base tables `sql/schema/` creates,
`marts/` makes the public views and tables of the warehouse. The order of a build is derived from the
headers' `upstream`. Macros (`sql/macros/`) and the schema (`sql/schema/`) are DDL, run as they are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from tasks.settings import SQL_DIR
from tasks.warehouse.engines import in_lake
from tasks.warehouse.model_header import Header, ModelError, parse_header

__all__ = ["Model", "ModelError", "build_model", "build_order", "drop_model", "fingerprint", "load_models",
           "mart_build_order", "materialize", "model_sql", "run_ddl", "ddl_names"]

TEMPORARY_LAYERS = ("staging", "intermediate")
LAYERS = (*TEMPORARY_LAYERS, "base", "marts")
# Relations a reader registers on its connection before it builds a model over them (besides its raw_* files).
READER_RELATIONS = frozenset({"load_context", "reject_errors", "stg_requests", "stg_host_samples"})
_SEQUENCE = re.compile(r"create\s+sequence[^;]*;", re.IGNORECASE)
_DECLARED = re.compile(r"create\s+(?:or\s+replace\s+)?(?:temp\s+)?(?:table|macro)\s+(?:if\s+not\s+exists\s+)?(\w+)")


@dataclass(frozen=True)
class Model:
    """One model file: its object's name, layer, SQL, header, and the parameters its SQL binds."""

    name: str
    layer: str
    file: str  # as errors name it: sql/marts/verdicts.sql
    sql: str
    header: Header
    parameters: frozenset[str]

    @property
    def is_temporary(self) -> bool:
        """Made in the connection for one source or one run (staging, intermediate), not in the warehouse."""
        return self.layer in TEMPORARY_LAYERS


@cache
def model_sql(name: str) -> str:
    """The text of `sql/<folder>/<name>.sql`: DDL, or a report or check query (`model_sql("reports/runs")`)."""
    path = SQL_DIR / f"{name}.sql"
    if not path.is_file():
        raise FileNotFoundError(f"no SQL file {name!r} (looked for {path})")
    return path.read_text(encoding="utf-8")


def ddl_names(folder: str) -> list[str]:
    """The DDL files of a folder of `sql/`, in the order run_ddl runs them."""
    return [f"{folder}/{path.stem}" for path in sorted((SQL_DIR / folder).glob("*.sql"))]


def run_ddl(con: duckdb.DuckDBPyConnection, folder: str) -> None:
    """Run every file of a DDL folder (`schema`, `macros`) in file-name order (base_tables.sql first).

    DuckLake has no sequences: in a lake the `create sequence` statements are left out (lake.py reserves
    source keys from a counter instead).
    """
    lake = in_lake(con)
    for name in ddl_names(folder):
        sql = model_sql(name)
        con.execute(_SEQUENCE.sub("", sql) if lake else sql)


@cache
def load_models(root: Path = SQL_DIR) -> Mapping[str, Model]:
    """Every model under `root` by name, checked: each upstream is known, and no upstreams form a cycle."""
    models: dict[str, Model] = {}
    with duckdb.connect() as parser:
        for layer in LAYERS:
            for path in sorted((root / layer).glob("*.sql")):
                model = _read_model(parser, path, layer, root)
                if model.name in models:
                    raise ModelError(f"{model.file} and {models[model.name].file}: two models make {model.name}")
                models[model.name] = model
    known = _declared_names(root)
    for model in models.values():
        for name in model.header.upstream:
            if name not in models and name not in known and not name.startswith("raw_"):
                raise ModelError(f"{model.file}: upstream {name!r} is no model ({root.name}/*/{name}.sql), no "
                                 "base table of sql/schema, no macro of sql/macros and no reader's relation")
    build_order(models, models)  # raises on a cycle
    return models


def _read_model(parser: duckdb.DuckDBPyConnection, path: Path, layer: str, root: Path) -> Model:
    file = f"{root.name}/{layer}/{path.name}"
    # The runner wraps the select in DDL: no trailing `;`, and a newline so a last comment ends before it.
    sql = path.read_text(encoding="utf-8").rstrip().removesuffix(";") + "\n"
    header = parse_header(sql, file)
    statements = parser.extract_statements(sql)
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise ModelError(f"{file}: a model is one bare select; the runner creates its object")
    _check_layer(file, layer, header.materialized)
    return Model(path.stem, layer, file, sql, header, frozenset(statements[0].named_parameters))


def _check_layer(file: str, layer: str, materialized: str) -> None:
    """Temporary objects are never appended to across builds; base/ models only append to their table."""
    if layer in TEMPORARY_LAYERS and materialized == "incremental":
        raise ModelError(f"{file}: a {layer} model is temporary: materialized: view or table, not incremental")
    if layer == "base" and materialized != "incremental":
        raise ModelError(f"{file}: a base model appends to the table sql/schema creates: materialized: incremental")


def _declared_names(root: Path) -> frozenset[str]:
    """Base tables the schema creates, macros the macro files create, and the readers' relations."""
    paths = [path for folder in ("schema", "macros") for path in (root / folder).glob("*.sql")]
    declared = {name for path in paths for name in _DECLARED.findall(path.read_text(encoding="utf-8").lower())}
    return frozenset(declared) | READER_RELATIONS


def build_order(models: Mapping[str, Model], names: Iterable[str], layers: Collection[str] = LAYERS) -> list[Model]:
    """`names` and the models of `layers` they read, each after every model it reads.

    A depth-first walk, upstreams first and in name order, so every build runs in the same order; a model
    met again on the path that leads to it is a cycle, named by its files.
    """
    order: list[Model] = []
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in path:
            cycle = path[path.index(name):]
            raise ModelError(f"{' and '.join(models[each].file for each in cycle)} form a cycle of upstreams: "
                             + " -> ".join((*cycle, name)))
        for upstream in sorted(models[name].header.upstream):
            if upstream in models and models[upstream].layer in layers:
                visit(upstream, (*path, name))
        done.add(name)
        order.append(models[name])

    for name in sorted(names):
        visit(name, ())
    return order


def mart_build_order() -> list[Model]:
    """Every mart and the intermediate models they read, in build order (base tables are the readers')."""
    models = load_models()
    return build_order(models, [m.name for m in models.values() if m.layer == "marts"], ("intermediate", "marts"))


def fingerprint(models: Iterable[Model]) -> str:
    """A hash of the macros and of these models' SQL: when it changes, what they built is stale."""
    digest = hashlib.sha256()
    for name in ddl_names("macros"):
        digest.update(model_sql(name).encode())
    for model in models:
        digest.update(model.sql.encode())
    return digest.hexdigest()


def build_model(con: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, Any] | None = None,
                tables: set[str] | None = None) -> None:
    """Make the object of model `name` of `sql/` as its header says; `params` may hold more than it binds.

    `tables`: the warehouse's tables as `warehouse_tables` gave them, for a caller building many models
    (asking the catalog costs 5 ms a model); a table this makes is added to it."""
    materialize(con, load_models()[name], params or {}, tables)


def materialize(con: duckdb.DuckDBPyConnection, model: Model, params: Mapping[str, Any],
                tables: set[str] | None = None) -> None:
    """Make a model's object: a view or table (temporary in staging and intermediate), or rows added to a
    warehouse table, those of its unique_key's value (from `params`) replaced.

    Only the parameters its SQL names are bound (DuckDB refuses others); none at all keeps the statement
    off the prepared path, which a large insert pays for (see sources/base.py: load_requests).
    """
    bound = {key: value for key, value in params.items() if key in model.parameters} or None
    if model.header.materialized != "incremental":
        scope = "temp " if model.is_temporary else ""
        con.execute(f"create or replace {scope}{model.header.materialized} {model.name} as {model.sql}", bound)
        return
    # a base/ model's table is sql/schema's, made when the warehouse is opened for writing: no catalog query
    if model.layer != "base" and model.name not in (tables if tables is not None else warehouse_tables(con)):
        con.execute(f"create table {model.name} as select * from ({model.sql}) limit 0", bound)
        if tables is not None:
            tables.add(model.name)
    key = model.header.unique_key
    if key is not None:
        if key not in params:
            raise ModelError(f"{model.file}: building it needs ${key}, the value of its unique_key")
        con.execute(f"delete from {model.name} where {key} = ${key}", {key: params[key]})
    con.execute(f"insert into {model.name} by name {model.sql}", bound)


def warehouse_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The tables and views of the warehouse (not this connection's temporary objects).

    Asked of duckdb_columns(): on a lake, duckdb_tables() and information_schema.tables fetch every
    table's size statistics from the catalog (50-100 ms a call), the columns only its schema (3 ms)."""
    query = "select distinct table_name from duckdb_columns() where database_name = current_database()"
    return {name for (name,) in con.execute(query).fetchall()}


def warehouse_has(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether the warehouse has a table or view `name`."""
    return name in warehouse_tables(con)


def drop_model(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop the temporary object of a staging or intermediate model once its rows are used."""
    model = load_models()[name]
    if not model.is_temporary:
        raise ModelError(f"{model.file}: lives in the warehouse; only temporary models are dropped")
    con.execute(f"drop {model.header.materialized} if exists {model.name}")
