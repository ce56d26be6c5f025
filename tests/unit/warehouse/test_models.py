"""The model runner: headers, build order, materializations, and every model's grain proven on real data."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from tasks.warehouse import models
from tasks.warehouse.ingest import ingest_bundle
from tasks.warehouse.model_header import Header, ModelError, parse_header
from tasks.warehouse.models import build_order, load_models, materialize
from tests.golden.public_tables import sample_bundles

# Models the sample bundles give no rows: they hold no docker stats, no unreadable line, no malformed k6
# line and no clock far enough off to be corrected.
NO_SAMPLE_DATA = {
    "stg_docker_stats__samples": "no docker stats",
    "container_stats": "no docker stats",
    "int_health_findings__containers": "no docker stats",
    "int_health_findings__network": "no docker stats",
    "rejected_lines": "no unreadable line",
    "stg_k6__json_lines": "no malformed k6 line",
    "int_clock_moves": "no clock to correct",
    "change_points": "one run per campaign: no history to analyse",
    "change_events": "one run per campaign: no history to analyse",
    "history_exclusions": "no failed, invalid or excluded run",
    **dict.fromkeys(("stg_sar__samples", "stg_pidstat__samples", "host_network_stats", "host_disk_stats",
                     "process_stats", "int_health_findings__sysstat"),
                    "no sar or pidstat: their grains are proven on real output in tests/unit/warehouse/sources/test_sysstat.py"),
    "stg_procfs__samples": "no procfs monitor: its grain is proven on real output in tests/unit/warehouse/sources/test_procfs.py",
    "iteration_hooks": "no stage hooks (tests/integration/test_matrix_hooks.py has them)",
    "soak_drift": "no soak (its grain is checked on the fixture soaks of tests/unit/warehouse/marts/test_soak_drift.py)",
}


def _model(materialized: str, upstream: str, body: str = "select 1 as n", extra: str = "") -> str:
    header = f"-- A test model.\n-- materialized: {materialized}\n{extra}-- grain: none (a test)\n"
    return f"{header}-- upstream: {upstream}\n{body}\n"


def _project(root: Path, files: dict[str, str]) -> Path:
    """A sql/ folder with one base table (`facts`), one macro (`twice`) and the given model files."""
    sql = root / "sql"
    files = {
        "schema/base.sql": "create table if not exists facts (run_id varchar, n integer);\n",
        "macros/twice.sql": "create or replace temp macro twice(x) as 2 * x;\n",
        **files,
    }
    for name, text in files.items():
        (sql / name).parent.mkdir(parents=True, exist_ok=True)
        (sql / name).write_text(text)
    return sql


# --- headers -------------------------------------------------------------------------------------------------


def test_a_header_gives_its_fields_and_leaves_the_prose():
    text = (
        "-- Public mart: what it is. grain: this colon is prose\n"
        "-- materialized: incremental\n"
        "-- unique_key: run_id\n"
        "-- grain: run_id, iteration -- iteration NULL for the whole run\n"
        "-- upstream: int_request_stats, iterations,\n"
        "--           runs\n"
        "-- upstream_of_nothing: prose too\n"
        "select 1\n"
        "-- grain: after the header, ignored\n"
    )
    assert parse_header(text, "sql/marts/x.sql") == Header(
        "incremental", ("run_id", "iteration"), ("int_request_stats", "iterations", "runs"), "run_id")


def test_a_grain_of_none_is_no_key():
    header = parse_header("-- materialized: view\n-- grain: none (one row per logged request)\n-- upstream: raw_x\n",
                          "f.sql")
    assert header.grain == () and header.upstream == ("raw_x",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-- materialized: view\n-- upstream: a\n", "lacks `-- grain"),
        ("-- materialized: snapshot\n-- grain: a\n-- upstream: b\n", "expected one of view, table, incremental"),
        ("-- materialized: view\n-- unique_key: id\n-- grain: a\n-- upstream: b\n", "unique_key is for incremental"),
        ("-- materialized: view\n-- grain: one row per (a, b)\n-- upstream: c\n", "is not a name"),
        ("-- materialized: view\n-- grain: a\n-- grain: b\n-- upstream: c\n", "given twice"),
    ],
)
def test_a_wrong_header_is_an_error_naming_the_file(text, message):
    with pytest.raises(ModelError, match=message) as raised:
        parse_header(text, "sql/marts/x.sql")
    assert str(raised.value).startswith("sql/marts/x.sql: ")


# --- the project: upstream and order -------------------------------------------------------------------------


def test_a_cycle_names_both_files(tmp_path):
    root = _project(tmp_path, {"marts/a.sql": _model("view", "b"), "intermediate/b.sql": _model("table", "a")})
    with pytest.raises(ModelError, match=r"sql/marts/a\.sql and sql/intermediate/b\.sql form a cycle.*a -> b -> a"):
        load_models(root)


def test_an_unknown_upstream_names_both_files(tmp_path):
    root = _project(tmp_path, {"marts/a.sql": _model("view", "facts, twice, raw_file, missing")})
    with pytest.raises(ModelError, match=r"sql/marts/a\.sql: upstream 'missing' is no model \(sql/\*/missing\.sql\)"):
        load_models(root)


def test_a_model_is_one_bare_select(tmp_path):
    root = _project(tmp_path, {"marts/a.sql": _model("view", "facts", "create view a as select 1")})
    with pytest.raises(ModelError, match="sql/marts/a.sql: a model is one bare select"):
        load_models(root)


def test_a_temporary_layer_is_never_incremental(tmp_path):
    root = _project(tmp_path, {"staging/stg_a.sql": _model("incremental", "raw_a")})
    with pytest.raises(ModelError, match="sql/staging/stg_a.sql: a staging model is temporary"):
        load_models(root)


def test_the_build_order_puts_every_model_after_what_it_reads(tmp_path):
    root = _project(tmp_path, {
        "marts/z_first.sql": _model("view", "facts"),
        "marts/a_last.sql": _model("view", "m_middle, int_b"),
        "marts/m_middle.sql": _model("view", "z_first, int_b"),
        "intermediate/int_b.sql": _model("table", "z_first"),
    })
    order = [model.name for model in build_order(load_models(root), ["a_last"])]
    assert order == ["z_first", "int_b", "m_middle", "a_last"]


def test_the_real_marts_are_built_after_what_they_read():
    order = [model.name for model in models.mart_build_order()]
    for position, name in enumerate(order):
        upstream = set(load_models()[name].header.upstream)
        assert not upstream & set(order[position:]), name
    assert {name for name, model in load_models().items() if model.layer == "marts"} <= set(order)


# --- materializations ----------------------------------------------------------------------------------------


def test_a_unique_key_replaces_its_rows_and_appending_keeps_them(tmp_path):
    root = _project(tmp_path, {
        "base/facts.sql": _model("incremental", "twice", "select $run_id as run_id, twice($n) as n"),
        "marts/totals.sql": _model("incremental", "facts", "select $run_id as run_id, sum(n) as n from facts "
                                   "where run_id = $run_id", "-- unique_key: run_id\n"),
        "staging/stg_x.sql": _model("view", "facts", "select * from facts"),
    })
    project = load_models(root)
    with duckdb.connect() as con:
        for ddl in ("schema/base.sql", "macros/twice.sql"):
            con.execute((root / ddl).read_text())
        for run_id, n in (("r1", 1), ("r1", 2), ("r2", 5)):
            materialize(con, project["facts"], {"run_id": run_id, "n": n, "unused": 0})
            materialize(con, project["totals"], {"run_id": run_id})
        materialize(con, project["stg_x"], {})
        assert con.execute("select run_id, n from totals order by 1").fetchall() == [("r1", 6), ("r2", 10)]
        assert con.execute("select count(*) from facts").fetchone() == (3,)
        assert con.execute("select temporary from duckdb_views() where view_name = 'stg_x'").fetchone() == (True,)
        with pytest.raises(ModelError, match=r"needs \$run_id"):
            materialize(con, project["totals"], {})


# --- grains, generated from the headers ----------------------------------------------------------------------

KEYED = sorted(name for name, model in load_models().items() if model.header.grain)


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, list[tuple[int, int]]]:
    """(rows, distinct keys) of each keyed model after every build while the sample bundles are ingested."""
    seen: dict[str, list[tuple[int, int]]] = defaultdict(list)
    build = models.materialize

    def counted(con, model, params, tables=None):
        build(con, model, params, tables)
        if model.header.grain:
            key = ", ".join(model.header.grain)
            seen[model.name].append(con.execute(
                f"select (select count(*) from {model.name}), "
                f"(select count(*) from (select distinct {key} from {model.name}))").fetchone())

    work = tmp_path_factory.mktemp("grains")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(models, "materialize", counted)
        for bundle in sample_bundles(work / "bundles"):
            ingest_bundle(bundle, work / "w.duckdb", progress=lambda message: None)
    return seen


@pytest.mark.parametrize("name", KEYED)
def test_a_models_grain_is_a_key(builds, name):
    if name not in builds:
        assert name in NO_SAMPLE_DATA, f"{name} was never built from the sample bundles"
        pytest.skip(f"not built from the sample bundles: {NO_SAMPLE_DATA[name]}")
    duplicated = [(rows, keys) for rows, keys in builds[name] if rows != keys]
    assert not duplicated, f"{name}: (rows, distinct keys) {duplicated}: its grain is not a key"
    if name not in NO_SAMPLE_DATA:
        assert max(rows for rows, _ in builds[name]) > 0, f"{name} is empty"
