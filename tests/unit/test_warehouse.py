"""The warehouse: re-ingest replaces a run, concurrent ingests wait for each other (grains: test_models.py)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone

import duckdb
import pytest

from tasks.warehouse.connection import WarehouseError, open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)


def _bundle(root, run_id, calls, hosts=("a", "b")):
    lines = [
        f'10.0.0.1 - - [{START + timedelta(seconds=n % 50):%d/%b/%Y:%H:%M:%S} +0000] "GET /x HTTP/1.1" 200 1 {n % 7}'
        for n in range(calls)
    ]
    files = {f"{h}.log": "\n".join(lines) + "\n" for h in hosts}
    sources = [{"kind": "access_log", "host": h, "path": f"{h}.log", "preset": "tomcat_common_d", "duration_unit": "ms"} for h in hosts]
    iterations = [
        {"index": 1, "start": START.isoformat(), "end": (START + timedelta(seconds=25)).isoformat()},
        {"index": 2, "start": (START + timedelta(seconds=25)).isoformat(), "end": (START + timedelta(seconds=50)).isoformat()},
    ]
    requirements = [{"id": "avg", "metric": "avg_ms", "op": "<", "threshold": 5, "side": "server"}]
    return write_bundle(root, files, sources, iterations, requirements, run_id=run_id)


def _count(path, sql):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def test_reingest_replaces_the_run_and_keeps_others(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(_bundle(tmp_path / "r1", "r1", 100), warehouse, progress=lambda m: None)
    ingest_bundle(_bundle(tmp_path / "r2", "r2", 30), warehouse, progress=lambda m: None)
    ingest_bundle(_bundle(tmp_path / "r1b", "r1", 40, hosts=("a",)), warehouse, progress=lambda m: None)
    assert _count(warehouse, "select count(*) from requests where run_id = 'r1'") == 40
    assert _count(warehouse, "select count(*) from requests where run_id = 'r2'") == 60
    assert _count(warehouse, "select count(*) from runs") == 2
    assert _count(warehouse, "select count(*) from sources where run_id = 'r1'") == 1
    assert _count(warehouse, "select count(*) from iteration_stats where run_id = 'r1'") == 2


def test_two_ingests_at_once_both_land(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    bundles = [_bundle(tmp_path / f"r{i}", f"r{i}", 20_000) for i in range(3)]
    code = "import sys; from tasks.warehouse.ingest import ingest_bundle; ingest_bundle(sys.argv[1], sys.argv[2])"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(b), str(warehouse)], stderr=subprocess.PIPE, text=True)
        for b in bundles
    ]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    assert [rc for rc, _ in results] == [0, 0, 0], results
    assert any("waiting for the warehouse" in err for _, err in results)
    assert _count(warehouse, "select count(*) from requests") == 3 * 2 * 20_000


def test_readers_need_an_existing_warehouse(tmp_path):
    with pytest.raises(WarehouseError, match="no warehouse at"):
        with open_warehouse(tmp_path / "absent.duckdb"):
            pass
