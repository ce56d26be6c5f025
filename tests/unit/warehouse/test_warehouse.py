"""The warehouse: re-ingest replaces a run, concurrent ingests wait for each other (grains: test_models.py)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb
import pytest

from tasks.settings import MEMORY_LIMIT
from tasks.warehouse.connection import WarehouseError, open_warehouse
from tasks.warehouse.ingest import IngestError, ingest_bundle
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


def _settings(con):
    return con.execute("select current_setting('memory_limit'), current_setting('temp_directory'), "
                       "current_setting('disabled_optimizers')").fetchone()


def _as_duckdb_shows(size):
    with duckdb.connect() as con:
        con.execute("set memory_limit = $size", {"size": size})
        return con.execute("select current_setting('memory_limit')").fetchone()[0]


def test_a_writer_has_a_settable_memory_limit_and_spills_beside_the_warehouse(tmp_path, monkeypatch):
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.delenv("PERFCAMPAIGN_MEMORY_LIMIT", raising=False)
    with open_warehouse(warehouse, write=True) as con:
        assert _settings(con) == (_as_duckdb_shows(MEMORY_LIMIT), f"{warehouse}.tmp", "common_subplan")
    monkeypatch.setenv("PERFCAMPAIGN_MEMORY_LIMIT", "700MB")
    with open_warehouse(warehouse, write=True) as con:
        assert _settings(con)[0] == _as_duckdb_shows("700MB") != _as_duckdb_shows(MEMORY_LIMIT)
    with open_warehouse(warehouse) as con:  # a reader holds no repeated subplan either
        assert _settings(con)[2] == "common_subplan"
    monkeypatch.setenv("PERFCAMPAIGN_MEMORY_LIMIT", "lots")
    with pytest.raises(WarehouseError, match="PERFCAMPAIGN_MEMORY_LIMIT='lots': expected a size"):
        with open_warehouse(warehouse, write=True):
            pass


def test_an_ingest_out_of_memory_names_its_limit_and_changes_nothing(tmp_path, monkeypatch):
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(_bundle(tmp_path / "r1", "r1", 100), warehouse, progress=lambda m: None)
    monkeypatch.setenv("PERFCAMPAIGN_MEMORY_LIMIT", "1MB")
    with pytest.raises(IngestError, match=r"(Out of Memory|could not allocate block).*may use 1MB of memory \(PERFCAMPAIGN_MEMORY_LIMIT\)"):
        ingest_bundle(_bundle(tmp_path / "r2", "r2", 20_000), warehouse, progress=lambda m: None)
    assert _count(warehouse, "select string_agg(run_id) from runs") == "r1"


def test_readers_need_an_existing_warehouse(tmp_path):
    with pytest.raises(WarehouseError, match="no warehouse at"):
        with open_warehouse(tmp_path / "absent.duckdb"):
            pass


HOLDER = """
import json, os, sys, time
from tasks.warehouse.connection import open_warehouse
path, hold_s, out, write = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4] == "write"
attempt = time.time()
with open_warehouse(path, write=write):
    acquired = time.time()
    open(out + ".in", "w").close()
    time.sleep(hold_s)
    released = time.time()
open(out, "w").write(json.dumps({"attempt": attempt, "acquired": acquired, "released": released}))
"""


def _hold(warehouse, hold_s, out, write=False, env=None):
    args = [sys.executable, "-c", HOLDER, str(warehouse), str(hold_s), str(out), "write" if write else "read"]
    return subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env)


def test_overlapping_readers_do_not_starve_a_waiting_writer(tmp_path):
    import json
    import time

    warehouse = tmp_path / "w.duckdb"
    with open_warehouse(warehouse, write=True):
        pass
    procs, readers = [], []
    for number in range(10):  # each reads for 1.5 s, a new one every 0.4 s: never a moment without a reader
        readers.append(tmp_path / f"reader-{number}.json")
        procs.append(_hold(warehouse, 1.5, readers[-1]))
        if number == 2:
            writer = tmp_path / "writer.json"
            procs.append(_hold(warehouse, 0.2, writer, write=True))
        time.sleep(0.4)
    assert [p.wait(timeout=120) for p in procs] == [0] * len(procs), [p.stderr.read() for p in procs]
    wrote = json.loads(writer.read_text())
    read = [json.loads(path.read_text()) for path in readers]
    # readers that came while the writer waited (0.3 s for it to reach the lock) went in after it, not before
    later = [r for r in read if wrote["attempt"] + 0.3 < r["attempt"] < wrote["acquired"]]
    assert later and all(r["acquired"] >= wrote["released"] for r in later), (wrote, read)
    # it waited for the readers inside, not for all ten (how long that took depends on the machine's load:
    # at load 12 the readers' own start and the writer's open took 6.6 s, where a quiet machine takes 2)
    assert wrote["acquired"] < max(r["released"] for r in read), (wrote, read)


def test_a_writer_gives_up_after_its_wait_with_a_clear_message(tmp_path):
    import os
    import time

    warehouse = tmp_path / "w.duckdb"
    with open_warehouse(warehouse, write=True):
        pass
    reader = _hold(warehouse, 120, tmp_path / "reader.json")  # stopped once the writer gave up
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "reader.json.in").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        bundle = _bundle(tmp_path / "r1", "r1", 10)
        env = {**os.environ, "PERFCAMPAIGN_WRITER_WAIT_S": "0.5"}
        done = subprocess.run([str(Path(sys.executable).parent / "perfcampaign"), "ingest", str(bundle), "-w",
                               str(warehouse)], capture_output=True, text=True, timeout=60, env=env)
    finally:
        reader.terminate()
        reader.wait(timeout=30)
    assert done.returncode != 0
    assert "gave up waiting for the warehouse" in done.stderr and "PERFCAMPAIGN_WRITER_WAIT_S" in done.stderr
    assert "after 0.5 s" in done.stderr and "Traceback" not in done.stderr


def test_a_writer_makes_the_schema_only_when_sql_changed_it_or_a_view_is_gone(tmp_path, monkeypatch):
    import tasks.warehouse.connection as connection

    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(_bundle(tmp_path / "r1", "r1", 100), warehouse, progress=lambda m: None)
    with open_warehouse(warehouse, write=True):
        pass  # a view over a mart table waits for the table's first build: made here, the schema now whole
    made = []
    ensure = connection.ensure_schema
    monkeypatch.setattr(connection, "ensure_schema", lambda con: (made.append(1), ensure(con)))
    ingest_bundle(_bundle(tmp_path / "r2", "r2", 100), warehouse, progress=lambda m: None)
    assert made == []  # the schema is this sql/'s: nothing to make
    with open_warehouse(warehouse, write=True) as con:
        con.execute("drop view host_samples")
    assert made == []  # the schema was whole when that writer opened
    with open_warehouse(warehouse, write=True):
        pass
    assert made == [1] and _count(warehouse, "select count(*) from duckdb_views() where view_name = 'host_samples'") == 1
    monkeypatch.setattr(connection, "schema_fingerprint", lambda: "another sql/")
    with open_warehouse(warehouse, write=True):
        pass
    assert made == [1, 1]
    assert _count(warehouse, "select value from warehouse_meta where key = 'schema_fingerprint'") == "another sql/"
