"""A warehouse file gets a run in two transactions (tasks/warehouse/ingest.py): its rows are committed under a staged
id, then published under the run's own. A failure anywhere, or a process that dies between the two, must leave the
warehouse as it was once the next ingest has run."""

from __future__ import annotations

import subprocess
import sys

import duckdb
import pytest

import tasks.warehouse.ingest as ingest
import tasks.warehouse.reading as reading
import tasks.warehouse.source_batches as source_batches
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import IngestError, ingest_bundle
from tasks.warehouse.moving import copy_runs
from tests.unit.warehouse.test_warehouse import _bundle

QUIET = {"progress": lambda message: None}


def _tables(warehouse) -> dict[str, tuple[int, int]]:
    """Every table's row count and a hash of its rows (not of their order): equal when the rows are."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        names = [row[0] for row in con.execute(
            "select table_name from duckdb_tables() where not temporary order by table_name").fetchall()]
        return {name: con.execute(f'select count(*), coalesce(sum(hash(t)), 0) from "{name}" as t').fetchone()
                for name in names}


def _opened_tables(warehouse) -> dict[str, tuple[int, int]]:
    """_tables once a writer has opened the warehouse: the first writer after the first ingest records the schema's
    fingerprint (schema_state.py), whatever it does next."""
    with open_warehouse(warehouse, write=True):
        pass
    return _tables(warehouse)


def _run_ids(warehouse) -> set[str]:
    """Every run id any table holds."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tables = [row[0] for row in con.execute(
            "select table_name from duckdb_columns() where column_name = 'run_id' "
            "and table_name in (select table_name from duckdb_tables() where not temporary)").fetchall()]
        return {row[0] for table in tables for row in con.execute(f'select distinct run_id from "{table}"').fetchall()}


def test_a_failure_while_publishing_leaves_the_runs_earlier_load_and_nothing_staged(tmp_path, monkeypatch):
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(_bundle(tmp_path / "r1", "r1", 100), warehouse, **QUIET)
    ingest_bundle(_bundle(tmp_path / "r2", "r2", 30), warehouse, **QUIET)
    before = _opened_tables(warehouse)

    def broken(con, run_id, then=None):
        raise RuntimeError("a mart failed")

    monkeypatch.setattr(ingest, "refresh_marts", broken)
    with pytest.raises(RuntimeError, match="a mart failed"):  # r1 again, another file: its old load must stay
        ingest_bundle(_bundle(tmp_path / "r1b", "r1", 40, hosts=("a",)), warehouse, **QUIET)
    assert _tables(warehouse) == before
    assert _run_ids(warehouse) == {"r1", "r2"}


def test_a_refused_source_after_a_committed_one_leaves_nothing(tmp_path, monkeypatch):
    """A large source is committed (staged) before the next is read: a refusal after it removes its rows too."""
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(_bundle(tmp_path / "r1", "r1", 100), warehouse, **QUIET)
    before = _opened_tables(warehouse)
    commits = _committed_sources(monkeypatch)
    bundle = _bundle(tmp_path / "r2", "r2", 100)
    (bundle / "b.log").write_text("not an access log line\n" * 50)  # every line rejected: over max_rejected_pct
    with pytest.raises(IngestError, match="b.log: 50 of 50 lines"):
        ingest_bundle(bundle, warehouse, **QUIET)
    assert commits == ["a"]  # a.log's 100 rows were committed, staged, before b.log was refused
    assert _tables(warehouse) == before


def _committed_sources(monkeypatch) -> list[str]:
    """Every source read alone and committed when staged, whatever its size; the hosts of the sources committed."""
    monkeypatch.setattr(reading, "COMMITTED_ROWS", 10)
    monkeypatch.setattr(source_batches, "SMALL_SOURCE_BYTES", 0)  # no batch: each source alone
    hosts: list[str] = []
    commit = ingest.commit_so_far

    def counted(con):
        hosts.extend(row[0] for row in con.execute(
            "select host from sources where starts_with(run_id, '~staged') and rows_loaded = 0 and source_key in "
            "(select source_key from request_facts) order by source_key").fetchall())
        commit(con)

    monkeypatch.setattr(ingest, "commit_so_far", counted)
    return hosts


def test_a_staged_run_gives_the_tables_of_one_transaction(tmp_path, monkeypatch):
    """Sources committed one by one while read give the same rows, marts included, as a read in one go."""
    whole, committed = tmp_path / "whole.duckdb", tmp_path / "committed.duckdb"
    bundle = _bundle(tmp_path / "r1", "r1", 500)
    ingest_bundle(bundle, whole, **QUIET)
    commits = _committed_sources(monkeypatch)
    ingest_bundle(bundle, committed, **QUIET)
    assert commits == ["a", "b"]
    left, right = _tables(whole), _tables(committed)
    del left["runs"], right["runs"]  # ingested_at differs
    assert left == right and left["request_facts"][0] == 1000


DIES_BETWEEN = """
import os, sys
import tasks.warehouse.ingest as ingest
ingest.refresh_marts = lambda *args, **kwargs: os._exit(3)  # the process dies after the staged commit
ingest.ingest_bundle(sys.argv[1], sys.argv[2], progress=lambda message: None)
"""


def test_the_next_ingest_removes_the_rows_of_one_that_died_before_publishing(tmp_path):
    warehouse, clean = tmp_path / "w.duckdb", tmp_path / "clean.duckdb"
    ingest_bundle(_bundle(tmp_path / "r1", "r1", 100), warehouse, **QUIET)
    died = subprocess.run([sys.executable, "-c", DIES_BETWEEN, str(_bundle(tmp_path / "r2", "r2", 30)), str(warehouse)],
                          capture_output=True, text=True, timeout=120)
    assert died.returncode == 3, died.stderr
    assert _run_ids(warehouse) == {"r1", "~staged r2"}  # what a crash leaves: the staged rows, never published
    assert copy_runs(warehouse, tmp_path / "copy.duckdb").runs == ["r1"]  # no run of its own: not copied
    said = []
    ingest_bundle(_bundle(tmp_path / "r3", "r3", 20), warehouse, progress=said.append)
    assert "removed the rows of an ingest that stopped before it published them ('~staged r2')" in said
    assert _run_ids(warehouse) == {"r1", "r3"}
    for run in ("r1", "r3"):
        ingest_bundle(tmp_path / run, clean, **QUIET)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        facts = con.execute("select count(*), count(distinct source_key) from request_facts").fetchone()
    assert facts == (2 * 100 + 2 * 20, 4)  # r2's 60 staged rows are gone
    assert {name: count for name, (count, _) in _tables(warehouse).items()} == \
        {name: count for name, (count, _) in _tables(clean).items()}
