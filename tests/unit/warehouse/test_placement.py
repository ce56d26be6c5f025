"""Placing rows in iterations (sql/macros/place_in_iterations.sql, docs/warehouse.md): known answers on a few
stamps, many random stamps against a brute-force reading of the rule (tests/independent.py), a real
two-server bundle read with pandas, and background calls declared once."""

from __future__ import annotations

import gzip
import shutil
from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from tasks.warehouse.ingest import ingest_bundle
from tasks.warehouse.models import run_ddl
from tests.independent import assign_iterations, read_clf_with_duration
from tests.golden.public_tables import SAMPLES

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
SECOND_US = 1_000_000
# Windows in seconds after T0: 1 and 2 are 0.4 s apart, 2 and 3 0.1 s, 3 and 4 5.5 s.
WINDOWS = {1: (10.0, 20.3), 2: (20.7, 30.4), 3: (30.5, 40.0), 4: (45.5, 50.0)}


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.fixture
def con():
    with duckdb.connect() as con:
        con.execute("set TimeZone = 'UTC'")
        run_ddl(con, "schema")
        run_ddl(con, "macros")
        con.executemany(
            "insert into iterations by name select 'r1' as run_id, $i as iteration, $s as started_at, $e as ended_at, "
            "0 as duration_s",
            [{"i": i, "s": at(s), "e": at(e)} for i, (s, e) in WINDOWS.items()],
        )
        yield con


def placed(con, stamps: list[float], resolution_us: int, pinned: int | None = None) -> list[int | None]:
    """The iteration the macro gives each stamp (seconds after T0), through load_context as readers publish it."""
    con.execute("create or replace temp table load_context as select 'r1' as run_id, 7 as source_key, "
                "$pinned::integer as pinned_iteration, 'h' as host, 'p' as path, $r::bigint as resolution_us",
                {"pinned": pinned, "r": resolution_us})
    con.execute("create or replace temp table stamps as select unnest($t::timestamptz[]) as t, "
                "unnest(range(len($t))) as n", {"t": [at(s) for s in stamps]})
    rows = con.execute("select iteration from placed_in_iterations('stamps', epoch_us(t)) order by n").fetchall()
    return [row[0] for row in rows]


def test_whole_second_stamps_go_where_their_second_overlaps_most(con):
    stamps = {
        12: 1,  # [12, 13) inside 1
        19: 1,  # [19, 20) inside 1
        20: 1,  # [20, 21): 0.3 s in 1, 0.3 s in 2: equal, the earlier
        30: 3,  # [30, 31): 0.4 s in 2, 0.5 s in 3: the larger
        44: None,  # [44, 45): in none
        45: 4,  # [45, 46): only 0.5 s in 4
        49: 4,  # [49, 50) inside 4 up to its end
        50: None,  # [50, 51): 4 ends at 50
        9: None,  # [9, 10): 1 starts at 10
    }
    assert placed(con, list(stamps), SECOND_US) == list(stamps.values())


def test_resolution_zero_is_start_inclusive_end_exclusive(con):
    stamps = {10.0: 1, 20.29: 1, 20.3: None, 20.5: None, 20.7: 2, 30.4: None, 30.5: 3, 49.999: 4, 50.0: None}
    assert placed(con, list(stamps), 0) == list(stamps.values())


def test_a_pinned_iteration_wins(con):
    assert placed(con, [5, 12, 44, 60], SECOND_US, pinned=2) == [2, 2, 2, 2]


@pytest.mark.parametrize("resolution_us", [0, 1, 1_000, 250_000, SECOND_US])
def test_random_stamps_agree_with_the_brute_force_rule(con, resolution_us):
    rng = np.random.default_rng(resolution_us)
    # whole units of the resolution, as a clock of that resolution writes them, around every boundary
    unit = max(resolution_us, 1) / SECOND_US
    stamps = list(np.floor(rng.uniform(8, 52, 4000) / unit) * unit)
    frame = pd.DataFrame({"started_at": [pd.Timestamp(at(s)) for s in stamps]})
    windows = [(i, at(s).isoformat(), at(e).isoformat()) for i, (s, e) in WINDOWS.items()]
    want = assign_iterations(frame, windows, resolution_s=resolution_us / SECOND_US)
    got = pd.Series(placed(con, stamps, resolution_us), dtype="float")
    assert got.isna().sum() == want.isna().sum() > 0
    assert (got.fillna(0) == want.fillna(0)).all()


@pytest.mark.parametrize(("stamp", "resolution_us", "in_warmup"), [
    (11.0, SECOND_US, True),  # [11, 12) before the warm-up's end at 12
    (11.5, SECOND_US, True),  # [11.5, 12.5): half and half, the earlier
    (11.6, SECOND_US, False),  # [11.6, 12.6): more after
    (11.999, 0, True),
    (12.0, 0, False),
    (12.0, 1, False),
])
def test_the_warm_up_boundary_follows_the_same_rule(con, stamp, resolution_us, in_warmup):
    got = con.execute("select in_warmup($t::timestamptz, $r, $s::timestamptz, 2.0)",
                      {"t": at(stamp), "r": resolution_us, "s": at(10)}).fetchone()[0]
    assert got is in_warmup


def _k6_calls(path) -> int:
    with gzip.open(path, "rt") as lines:
        return sum(1 for line in lines if '"type":"Point"' in line and '"metric":"http_req_duration"' in line)


@pytest.fixture(scope="module")
def echo(tmp_path_factory):
    """The real two-server echo bundle (k6 against two JVM services), ingested as shipped."""
    root = tmp_path_factory.mktemp("echo") / "bundle"
    shutil.copytree(SAMPLES / "bundle-echo", root)
    ingest_bundle(root, root.parent / "w.duckdb", progress=lambda message: None)
    manifest = yaml.safe_load((root / "run.yaml").read_text())
    with duckdb.connect(str(root.parent / "w.duckdb"), read_only=True) as con:
        stats = con.execute("select side, host, iteration, calls from iteration_stats").df()
        boundary = dict(con.execute("select iteration, boundary_calls from iterations").fetchall())
    return root, manifest, stats, boundary


def test_on_a_real_bundle_the_servers_calls_equal_the_clients_per_iteration(echo):
    root, manifest, stats, boundary = echo
    windows = [(it["index"], it["start"], it["end"]) for it in manifest["iterations"]]
    logs = pd.concat([read_clf_with_duration(root / s["path"]).assign(host=s["host"])
                      for s in manifest["sources"] if s["kind"] == "access_log"], ignore_index=True)
    logs["iteration"] = assign_iterations(logs, windows, resolution_s=1)  # %t: whole seconds
    client = {s["iteration"]: _k6_calls(root / s["path"]) for s in manifest["sources"] if s["kind"] == "k6_json"}
    for index, start, end in windows:
        placed = logs[logs["iteration"] == index]
        # the client's k6 files are pinned to their step: every call it sent then, which the servers logged
        assert len(placed) == client[index] > 0
        for host in ("app1", "app2"):
            got = stats[(stats.side == "server") & (stats.host == host) & (stats.iteration == index)].calls
            assert list(got) == [int((placed["host"] == host).sum())]
        inside = (placed["started_at"] >= pd.Timestamp(start)) & (
            placed["started_at"] + pd.Timedelta(seconds=1) <= pd.Timestamp(end))
        assert boundary[index] == int((~inside).sum()) > 0  # the first and last partial seconds
    assert logs["iteration"].notna().all()


def test_declared_background_calls_leave_every_tested_figure(tmp_path):
    """/health calls a server logged among the tested ones: declared once, they are side background."""
    root = tmp_path / "bundle"
    shutil.copytree(SAMPLES / "bundle-echo", root)
    manifest = yaml.safe_load((root / "run.yaml").read_text())
    log = root / "app1" / "access.log"
    tested = read_clf_with_duration(log)
    stamp = pd.Timestamp(manifest["iterations"][1]["start"]) + pd.Timedelta(seconds=2)
    health = [f'127.0.0.1 - - [{stamp.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "GET /health HTTP/1.1" 200 2 150'] * 40
    log.write_text(log.read_text() + "\n".join(health) + "\n")
    manifest["sources"][0]["background_labels"] = ["*/health"]
    (root / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda message: None)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        server = con.execute(
            "select sum(calls) from iteration_stats where side = 'server' and host = 'app1'").fetchone()
        background = con.execute(
            "select iteration, host, calls from iteration_stats where side = 'background'").fetchall()
    assert server[0] == len(tested)  # every /echo call of app1 is in an iteration, no /health call
    assert background == [(2, "app1", 40)]
