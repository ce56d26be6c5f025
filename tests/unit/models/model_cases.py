"""Model tests as data (as dbt's `unit_tests` and SQLMesh's test files): one model built over given rows.

`tests/unit/models/<model>.yaml` holds cases; each gives the rows of some of the model's upstream relations
and the rows the model (or one of its CTEs) must give. The model is built by the project's own runner
(`tasks.warehouse.models.materialize`) in a real DuckDB warehouse, nothing else of the road runs:

    params: {run_id: r}                 # bound parameters of every case (a case's own `params` add to them)
    cases:
      - name: what the case shows
        given:                          # rows of upstream relations; every other upstream is empty
          int_host_samples:
            - {host: lg1, iteration: 2, cpu_idle_pct: 0}
          runs: [{}]
        build: [int_health_thresholds]  # upstream models made by their own SQL from the given rows
        cte: cpu_findings               # optional: the rows of this CTE instead of the model's
        expect:                         # exactly these rows, in any order; only the columns written are compared
          - {host: lg1, rule: loadgen_cpu, severity: fail, evidence: {samples_idle_below_min: 1}}

A given relation gets the columns and types it has in the warehouse (a base table of `sql/schema`, or the
model of that name built over empty tables); columns a row leaves out are NULL, and `run_id` is the case's
when the relation has one. An expected JSON column written as a mapping compares only the keys written;
numbers compare to 1e-9 (the model rounds: write what the rule gives after its rounding).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.functions import register
from tasks.warehouse.models import Model, build_order, load_models, mart_build_order, materialize

CASES_DIR = Path(__file__).parent
DEFAULT_PARAMS = {"run_id": "r"}
_FINAL = re.compile(r"^select \* from final\b.*\Z", re.MULTILINE | re.DOTALL)
_CASE_KEYS = {"name", "given", "build", "cte", "expect", "params"}


@dataclass(frozen=True)
class Case:
    """One case of a model's file."""

    model: str
    name: str
    given: Mapping[str, list[dict[str, Any]]]
    expect: list[dict[str, Any]]
    params: Mapping[str, Any]
    build: tuple[str, ...] = ()
    cte: str | None = None
    file: str = field(default="", compare=False)


def load_cases(folder: Path = CASES_DIR) -> list[Case]:
    """Every case of every `<model>.yaml` of the folder; a key or relation the runner does not know is an error."""
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        model = path.stem
        if model not in load_models():
            raise ValueError(f"{path.name}: no model {model!r} in sql/")
        for number, raw in enumerate(spec["cases"]):
            unknown = set(raw) - _CASE_KEYS
            if unknown or "expect" not in raw:
                raise ValueError(f"{path.name}: cases.{number}: unknown keys {sorted(unknown)} or no `expect`")
            cases.append(Case(model, raw["name"], raw.get("given") or {}, raw["expect"],
                              {**DEFAULT_PARAMS, **spec.get("params", {}), **raw.get("params", {})},
                              tuple(raw.get("build", ())), raw.get("cte"), path.name))
    return cases


@cache
def shapes() -> dict[str, list[tuple[str, str]]]:
    """The columns and types of every base table and every intermediate and mart model, from a warehouse in
    which every model is built over empty tables (made once per test process, in a temporary folder)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder, open_warehouse(Path(folder) / "shapes.duckdb", write=True) as con:
        register(con)
        for model in mart_build_order():
            materialize(con, model, DEFAULT_PARAMS)
        rows = con.execute("select table_name, column_name, data_type from duckdb_columns() "
                           "order by table_name, column_index").fetchall()
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        found.setdefault(table, []).append((column, data_type))
    return found


def run_case(case: Case, folder: Path) -> list[dict[str, Any]]:
    """Build the case's model over its given rows in a new warehouse in `folder`; the rows it gives."""
    models = load_models()
    model = models[case.model]
    unknown = set(case.given) - set(model.header.upstream) - set(_built_upstream(case, models))
    if unknown:
        raise ValueError(f"{case.file}: {case.name}: {sorted(unknown)} are not upstream of {case.model}")
    with open_warehouse(folder / "case.duckdb", write=True) as con:
        register(con)
        empty = [name for name in model.header.upstream
                 if name in models and models[name].layer in ("intermediate", "marts") and name not in case.build]
        for relation in dict.fromkeys([*case.given, *empty]):
            _given(con, relation, case.given.get(relation, []), case.params)
        for upstream in build_order(models, case.build):
            if upstream.name in case.build:
                materialize(con, upstream, case.params)
        if case.cte is None:
            materialize(con, model, case.params)
            cursor = con.execute(f"select * from {model.name}")
        else:
            cursor = con.execute(*_cte_query(model, case.cte, case.params))
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]


def _built_upstream(case: Case, models: Mapping[str, Model]) -> set[str]:
    """Relations the models of `build` read: givens for them are upstream too."""
    return {name for built in case.build for name in models[built].header.upstream}


def _given(con: duckdb.DuckDBPyConnection, relation: str, rows: list[dict[str, Any]], params: Mapping[str, Any]) -> None:
    """Make `relation` a table of its warehouse shape holding `rows` (run_id filled in from params)."""
    columns = shapes().get(relation)
    if columns is None:
        raise ValueError(f"{relation}: no base table or intermediate/mart model of that name to take columns from")
    kind = con.execute("select table_type from information_schema.tables where table_name = $name",
                       {"name": relation}).fetchone()
    if kind is None or kind[0] == "VIEW":
        if kind is not None:
            con.execute(f"drop view {relation}")
        con.execute(f"create temp table {relation} ({', '.join(f'{n} {t}' for n, t in columns)})")
    types = dict(columns)
    for row in rows:
        unknown = set(row) - set(types)
        if unknown:
            raise ValueError(f"{relation}: no columns {sorted(unknown)} (it has {', '.join(types)})")
        values = {"run_id": params["run_id"], **row} if "run_id" in types else dict(row)
        names = list(values)
        con.execute(f"insert into {relation} ({', '.join(names)}) values ({', '.join(f'${n}' for n in names)})",
                    {n: _value(values[n], types[n]) for n in names})


def _value(value: Any, data_type: str) -> Any:
    return json.dumps(value) if data_type == "JSON" and not isinstance(value, str) else value


def _cte_query(model: Model, cte: str, params: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The model's select with its last line `select * from final ...` reading `cte` instead."""
    if not re.search(rf"^{cte} as (?:materialized )?\(", model.sql, re.MULTILINE) or not _FINAL.search(model.sql):
        raise ValueError(f"{model.file}: no CTE {cte!r}, or no closing `select * from final`")
    sql = _FINAL.sub(f"select * from {cte}\n", model.sql)
    return sql, {key: value for key, value in params.items() if key in model.parameters}


def assert_rows(case: Case, got: list[dict[str, Any]]) -> None:
    """`got` holds exactly the expected rows, in any order, compared on the columns each expected row writes."""
    left = list(got)
    missing = []
    for wanted in case.expect:
        match = next((row for row in left if _matches(row, wanted)), None)
        if match is None:
            missing.append(wanted)
        else:
            left.remove(match)
    if missing or left:
        shown = "\n".join(f"  {_shown(row, case.expect)}" for row in got)
        pytest.fail(f"{case.file}: {case.name}:\nexpected and not found: {missing}\nnot expected: "
                    f"{[_shown(row, case.expect) for row in left]}\nthe model gave:\n{shown}", pytrace=False)


def _matches(row: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    for column, value in wanted.items():
        if column not in row:
            raise ValueError(f"expected column {column!r}: the model gives {', '.join(row)}")
        actual = row[column]
        if isinstance(value, dict):
            actual = json.loads(actual) if isinstance(actual, str) else actual
            if not isinstance(actual, dict) or not all(k in actual and _same(actual[k], v) for k, v in value.items()):
                return False
        elif not _same(actual, value):
            return False
    return True


def _same(actual: Any, value: Any) -> bool:
    if isinstance(value, float) or isinstance(actual, float):
        return actual is not None and value is not None and actual == pytest.approx(value, rel=1e-9, abs=1e-9)
    if isinstance(value, list) and isinstance(actual, list):
        return len(value) == len(actual) and all(_same(a, v) for a, v in zip(actual, value))
    return actual == value


def _shown(row: Mapping[str, Any], expect: list[dict[str, Any]]) -> dict[str, Any]:
    """A row cut to the columns the case's expected rows write, so a failure reads like the file."""
    columns = {column for wanted in expect for column in wanted} or set(row)
    return {column: value for column, value in row.items() if column in columns}
