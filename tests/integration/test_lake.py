"""Many writers on one DuckLake (real PostgreSQL catalog, moto S3 data): concurrent ingests from separate
processes, a reader that never sees half a run, one run ingested twice at once, a kill -9 mid-ingest, and
a copy file -> lake -> file that leaves every public table as it was."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import boto3
import duckdb
import pytest
import yaml

from bench.ingest import generate_access_log
from tasks.history.analysis import analyse_run
from tasks.warehouse.connection import WarehouseError, open_warehouse
from tasks.warehouse.engines import parse_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tasks.warehouse.moving import copy_runs
from tests.golden.public_tables import ROOT, SAMPLES, cell, snapshot
from tests.history_nights import Night, write_night
from tests.lakeserver import BUCKET, new_lake, pg_server, s3_endpoint  # noqa: F401 - the lake's fixtures

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-c", "from tasks.cli.main import main; main()"]
KILL_ATTEMPTS = 3  # kills of a lake ingest tried until one lands before its commit
COUNTS = ("select (select count(*) from runs where run_id = $run), (select count(*) from sources where run_id = $run), "
          "(select count(*) from requests where run_id = $run), (select count(*) from verdicts where run_id = $run)")


def echo_bundle(folder: Path, run_id: str) -> Path:
    """The sample echo bundle under another run_id."""
    shutil.copytree(SAMPLES / "bundle-echo", folder)
    manifest = yaml.safe_load((folder / "run.yaml").read_text())
    (folder / "run.yaml").write_text(yaml.safe_dump({**manifest, "run_id": run_id}, sort_keys=False))
    return folder


def counts(warehouse, run_id: str) -> tuple[int, ...]:
    with open_warehouse(warehouse) as con:
        return con.execute(COUNTS, {"run": run_id}).fetchone()


def ingest_process(bundle: Path, warehouse: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([*CLI, "ingest", str(bundle), "--warehouse", warehouse], cwd=ROOT, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)


@pytest.fixture(scope="module")
def one_echo_run(tmp_path_factory) -> tuple[int, ...]:
    """runs, sources, requests and verdicts of the echo bundle ingested alone into a file warehouse."""
    work = tmp_path_factory.mktemp("file")
    ingest_bundle(echo_bundle(work / "echo", "echo-alone"), work / "w.duckdb", progress=lambda _: None)
    found = counts(work / "w.duckdb", "echo-alone")
    assert found[0] == 1 and found[2] > 10_000
    return found


def test_four_ingests_at_once_all_land_and_a_reader_never_sees_half_a_run(new_lake, tmp_path, one_echo_run):
    lake = new_lake("writers")
    run_ids = [f"echo-{n}" for n in range(4)]
    seen: list[tuple] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.wait(0.3):
            try:
                with open_warehouse(lake) as con:
                    seen.extend(con.execute(COUNTS, {"run": run}).fetchone() for run in run_ids)
            except (duckdb.CatalogException, WarehouseError):
                continue  # no tables yet: the first writer is making them

    reader = threading.Thread(target=read)
    reader.start()
    writers = [ingest_process(echo_bundle(tmp_path / run, run), lake) for run in run_ids]
    errors = [writer.communicate(timeout=300)[1] for writer in writers]
    stop.set()
    reader.join()
    assert [writer.returncode for writer in writers] == [0] * 4, errors
    for run in run_ids:
        assert counts(lake, run) == one_echo_run
    assert {row for row in seen} <= {(0, 0, 0, 0), one_echo_run}, "a reader saw part of a run"
    assert len(seen) > len(run_ids)
    with open_warehouse(lake) as con:
        assert con.execute("select count(*) = count(distinct source_key) from sources").fetchone()[0]


def test_one_run_ingested_twice_at_once_lands_once(new_lake, tmp_path, one_echo_run):
    lake = new_lake("twice")
    bundle = echo_bundle(tmp_path / "echo", "echo-twice")
    writers = [ingest_process(bundle, lake) for _ in range(2)]
    errors = [writer.communicate(timeout=300)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], errors
    assert counts(lake, "echo-twice") == one_echo_run


@pytest.mark.parametrize("engine", ["file", "lake"])
def test_a_table_a_user_dropped_is_made_again_by_the_next_writer(engine, new_lake, tmp_path):
    warehouse = tmp_path / "w.duckdb" if engine == "file" else new_lake("dropped")
    ingest_bundle(echo_bundle(tmp_path / "echo", "echo-dropped"), warehouse, progress=lambda _: None)  # marts too
    for table in ("rejected_lines", "lake_source_keys" if engine == "lake" else "validations"):
        with open_warehouse(warehouse, write=True) as con:  # what an ingest opens first
            con.execute(f"drop table {table}")
        with open_warehouse(warehouse, write=True):
            pass
        with open_warehouse(warehouse) as con:
            assert con.execute(f"select count(*) from duckdb_columns() where table_name = '{table}'").fetchone()[0] > 0


def _objects(endpoint: str, prefix: str) -> set[str]:
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return {item["Key"] for page in pages for item in page.get("Contents", [])}




def test_a_killed_ingest_leaves_nothing_referenced_and_maintain_deletes_its_files(new_lake, s3_endpoint, tmp_path,
                                                                                  one_echo_run):
    """An ingest killed once its first data file is in the bucket leaves no row of its run, and `warehouse maintain`
    deletes its files. The kill is sent as soon as the test sees a file, and the copy may commit before it lands (a
    busy machine can hold the test's polling that long): such a run must then be there whole, and the kill is tried
    again with another run, at most KILL_ATTEMPTS times."""
    lake = new_lake("killed")
    prefix = parse_warehouse(lake).data_path.removeprefix(f"s3://{BUCKET}/")
    ingest_bundle(echo_bundle(tmp_path / "echo", "echo-kept"), lake, progress=lambda _: None)
    for attempt in range(1, KILL_ATTEMPTS + 1):
        run_id = f"killed-{attempt}"
        before = _objects(s3_endpoint, prefix)
        bundle = tmp_path / run_id
        bundle.mkdir()
        generate_access_log(bundle / "access.log", 600_000, 2_000)
        (bundle / "run.yaml").write_text(yaml.safe_dump({
            "format": 1, "run_id": run_id, "campaign": "kill", "timezone": "UTC",
            "iterations": [{"index": 1, "start": "2025-11-24T16:00:00Z", "end": "2025-11-24T20:00:00Z", "load": {}}],
            "sources": [{"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d",
                         "duration_unit": "ms"}]}))
        writer = ingest_process(bundle, lake, start_new_session=True)
        deadline = time.monotonic() + 120
        while not (_objects(s3_endpoint, prefix) - before) and writer.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert writer.poll() is None, "the ingest ended before it wrote a file: make the bundle bigger"
        os.killpg(writer.pid, signal.SIGKILL)
        writer.wait()
        landed = counts(lake, run_id)[:3]
        if landed == (0, 0, 0):
            break
        assert landed == (1, 1, 600_000), "a killed ingest left part of its run"  # the kill came after the commit
    else:
        pytest.fail(f"every one of {KILL_ATTEMPTS} kills came after the copy's commit")
    assert counts(lake, "echo-kept") == one_echo_run
    orphans = _objects(s3_endpoint, prefix) - before
    assert orphans, "the killed ingest left no file to clean"
    maintained = subprocess.run([*CLI, "warehouse", "maintain", "--warehouse", lake, "--older-than-hours", "0"],
                                cwd=ROOT, capture_output=True, text=True)
    assert maintained.returncode == 0, maintained.stderr
    assert not (_objects(s3_endpoint, prefix) & orphans), "maintain left the killed ingest's files"
    assert counts(lake, "echo-kept") == one_echo_run  # and kept every file the catalog needs


def test_a_copy_file_to_lake_to_file_leaves_every_public_table_equal(new_lake, tmp_path, sample_warehouse):
    original = sample_warehouse
    lake = new_lake("copied")
    back = tmp_path / "back.duckdb"
    for source, destination in ((original, lake), (lake, back)):
        done = subprocess.run([*CLI, "warehouse", "copy", str(source), str(destination)], cwd=ROOT,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    expected = snapshot(original)
    assert snapshot(lake) == expected
    assert snapshot(back) == expected


def _digits(value) -> str:
    """A value as text, floats to 9 significant digits: the analysis sums rows in the order the engine returns
    them, so a lake's last bits differ from a file's, and at 12 digits one in some hundreds rounds the other way."""
    return format(value, ".9g") if isinstance(value, float) else cell(value)


def _all_runs_marts(warehouse) -> dict[str, list[str]]:
    """The marts made over every run of a campaign (the history's), as sorted rows of text; what depends on
    the order the analyses ran in (when a change was first seen, and by which run's analysis) left out."""
    with open_warehouse(warehouse) as con:
        return {view: sorted("\x1f".join(_digits(v) for v in row) for row in con.execute(
                    f"select * exclude (detected_at, first_detected_in) from {view}" if view == "change_points"
                    else f"select * from {view}").fetchall())
                for view in ("series", "history_exclusions", "change_points")}


def test_the_history_of_two_nights_ingested_at_once_equals_the_files(new_lake, tmp_path):
    """Six nights with latency +30 % from night 3: four nights copied in, the last two ingested at once by two
    processes (each re-analyses the campaign after its ingest: the analyses take turns); the all-runs marts
    equal a file's that took the nights one after the other."""
    bundles = [write_night(tmp_path, n, Night(latency={side: 1.3 if n >= 3 else 1.0 for side in ("server", "client")}))
               for n in range(6)]
    file = tmp_path / "w.duckdb"
    for bundle in bundles:
        ingest_bundle(bundle, file, progress=lambda _: None)
    analyse_run(file, "nightly-005")
    lake = new_lake("nights")
    copy_runs(file, lake, [f"nightly-{n:03d}" for n in range(4)])
    writers = [ingest_process(bundle, lake) for bundle in bundles[4:]]
    errors = [writer.communicate(timeout=300)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], [error[-1500:] for error in errors]
    expected = _all_runs_marts(file)
    assert any("\x1fnightly-003\x1f" in row for row in expected["change_points"]), "no change at night 3: no teeth"
    assert expected["series"] and expected["change_points"]
    found = _all_runs_marts(lake)
    for view, rows in expected.items():  # the differing rows, not a truncated dict diff
        assert set(found[view]) ^ set(rows) == set(), view
        assert found[view] == rows, view
