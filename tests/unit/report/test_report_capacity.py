"""The capacity mart: knee and maximum throughput per side, the load level read by the ramp's own rule (tasks/bundle/load.py)."""

from __future__ import annotations

import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.unit.report.conftest import query, records
from tests.unit.report.runs import (
    ACCESS,
    access_log,
    requests_of,
    windows,
    write_bundle,
)


def capacity(warehouse, run_id: str, side: str = "server", series: str = "") -> dict:
    rows = records(warehouse, "select * from capacity where run_id = $r and side = $s and series = $series",
                   {"r": run_id, "s": side, "series": series})
    assert len(rows) == 1
    return rows[0]


def test_saturated_run_has_its_knee_at_iteration_3(report_warehouse):
    row = capacity(report_warehouse, "sat-1")
    calls = [100, 200, 300, 305, 302]  # 10 s iterations (tests/unit/report/runs.py)
    assert row["saturated"] is True
    assert (row["knee_iteration"], row["knee_load_level"], row["knee_load"]) == (3, 30.0, "vus=30")
    assert row["knee_calls_per_s"] == pytest.approx(calls[2] / 10)
    assert (row["max_iteration"], row["max_calls_per_s"]) == (4, pytest.approx(30.5))
    assert "iteration 4 raised the load 33 % (vus=30 to vus=40) but throughput +1.7 %" in row["reason"]
    points = {p["iteration"]: p for p in row["points"]}
    assert points[4]["load_gain_pct"] == pytest.approx(100 * (40 / 30 - 1))
    assert points[4]["throughput_gain_pct"] == pytest.approx(100 * (calls[3] / calls[2] - 1))
    assert [points[i]["scales"] for i in range(1, 6)] == [None, True, True, False, False]


def test_a_run_that_scales_has_no_knee(report_warehouse):
    for side in ("server", "client"):
        row = capacity(report_warehouse, "pass-1", side)
        assert row["saturated"] is False and row["knee_iteration"] is None
        assert (row["max_iteration"], row["max_calls_per_s"]) == (3, pytest.approx(40.0))
        assert "no knee within the tested load" in row["reason"]


def test_one_iteration_cannot_be_judged(report_warehouse):
    row = capacity(report_warehouse, "cmp-a")
    assert row["saturated"] is None and "no knee can be judged" in row["reason"]


def test_grain_of_the_new_marts(report_warehouse):
    for mart, key in (("capacity", "run_id, side"), ("client_server_gap", "run_id, iteration"),
                      ("conclusions", "run_id, topic, subject")):
        total = query(report_warehouse, f"select count(*) n from {mart}")["n"][0]
        distinct = query(report_warehouse, f"select count(*) n from (select distinct {key} from {mart})")["n"][0]
        assert total == distinct > 0, mart


def _ramp(tmp_path, loads: list[dict], calls: list[int], run_id: str, **extra):
    server = []
    for window, count in zip(windows("sat-1", len(loads)), calls):
        server += requests_of(window, [20.0] * count)
    iterations = [{"index": i + 1, "start": s.isoformat(), "end": e.isoformat(), "load": load}
                  for i, ((s, e), load) in enumerate(zip(windows("sat-1", len(loads)), loads))]
    root = write_bundle(tmp_path / run_id, {"access.log": access_log(server)},
                        [{**ACCESS, "host": "app", "path": "access.log"}], iterations, run_id=run_id, **extra)
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, progress=lambda message: None)
    return warehouse


def test_manifest_names_the_load_key_and_the_scaling_rule(tmp_path):
    # rate doubles each step; throughput +60 %, then +80 %: scales at 0.5, not at min_scaling 0.7 from step 2
    loads = [{"rate": 100, "vus": 5}, {"rate": 200, "vus": 5}, {"rate": 400, "vus": 5}]
    warehouse = _ramp(tmp_path, loads, [100, 160, 288], "keyed", capacity={"load_key": "rate", "min_scaling": 0.7})
    row = capacity(warehouse, "keyed", series="vus=5")  # a constant key: one series, named
    assert [p["load_level"] for p in row["points"]] == [100.0, 200.0, 400.0]
    assert [p["series"] for p in row["points"]] == ["vus=5"] * 3
    assert (row["knee_iteration"], row["min_scaling"]) == (1, 0.7)
    assert "less than 0.7 x the load gain" in row["reason"]


def test_nodes_times_threads_and_one_series_per_message_size(tmp_path):
    loads = [{"nodes": 1, "threads": 10, "msg_kb": 1}, {"nodes": 2, "threads": 10, "msg_kb": 1},
             {"nodes": 1, "threads": 10, "msg_kb": 64}, {"nodes": 2, "threads": 10, "msg_kb": 64}]
    # 1 KB scales (100 -> 200 calls), 64 KB does not (50 -> 55): a row per size, 64 KB's knee is iteration 3
    warehouse = _ramp(tmp_path, loads, [100, 200, 50, 55], "sizes")
    assert [r["series"] for r in records(warehouse, "select series from capacity where run_id = 'sizes' and "
                                                    "side = 'server' order by series")] == ["msg_kb=1", "msg_kb=64"]
    small, large = capacity(warehouse, "sizes", series="msg_kb=1"), capacity(warehouse, "sizes", series="msg_kb=64")
    assert [(p["iteration"], p["load_level"], p["series"], p["scales"]) for p in small["points"]] == [
        (1, 10.0, "msg_kb=1", None), (2, 20.0, "msg_kb=1", True)]
    assert [(p["iteration"], p["load_level"], p["series"], p["scales"]) for p in large["points"]] == [
        (3, 10.0, "msg_kb=64", None), (4, 20.0, "msg_kb=64", False)]
    assert (small["saturated"], small["knee_iteration"], small["max_iteration"]) == (False, None, 2)
    assert (large["saturated"], large["knee_iteration"], large["max_iteration"]) == (True, 3, 4)
    assert large["max_calls_per_s"] == pytest.approx(5.5)


def test_the_tools_vu_pool_is_no_series_and_sizes_sort_by_value(tmp_path):
    from tasks.report.data import MART_ORDER

    # three message sizes at rate 10 then 20 calls/s; max_vus follows the rate (k6's pool, not a load dimension)
    sizes = [1024, 102400, 7]
    loads = [{"rate_per_s": rate, "max_vus": rate, "message_size": size} for size in sizes for rate in (10, 20)]
    warehouse = _ramp(tmp_path, loads, [rate * 10 for _ in sizes for rate in (10, 20)], "vu-pool")
    series = [r["series"] for r in records(
        warehouse, f"select series from capacity where run_id = 'vu-pool' and side = 'server' "
                   f"order by {MART_ORDER['capacity']}")]
    assert series == [f"message_size={size}" for size in sorted(sizes)]  # 7, 1024, 102400: not as text
    assert all(len(capacity(warehouse, "vu-pool", series=name)["points"]) == 2 for name in series)
    subjects = [r["subject"] for r in records(
        warehouse, f"select subject from conclusions where run_id = 'vu-pool' and topic = 'capacity' "
                   f"order by {MART_ORDER['conclusions']}")]
    assert subjects == [f"server message_size={size}" for size in sorted(sizes)]


def test_throughput_per_instance_and_the_failure_ratio_per_step(tmp_path):
    from tasks.cli.matrix import pivot, _per_instance
    from tasks.warehouse.connection import open_warehouse
    from tasks.warehouse.models import model_sql

    # Hono: producers (vus) ramp at 1 and at 2 adapters; calls/s per adapter is the step's calls/s / adapters
    loads = [{"vus": v, "adapters": a} for a in (1, 2) for v in (2, 4)]
    calls = [100, 180, 160, 300]
    warehouse = _ramp(tmp_path, loads, calls, "hono", capacity={"load_key": "vus", "instance_key": "adapters"})
    summary = records(warehouse, "select iteration, instances, calls_per_s, calls_per_s_per_instance, error_rate "
                                 "from iteration_summary where run_id = 'hono' and side = 'server' order by iteration")
    assert [r["instances"] for r in summary] == [1, 1, 2, 2]
    assert [r["calls_per_s_per_instance"] for r in summary] == pytest.approx(
        [n / 10 / load["adapters"] for n, load in zip(calls, loads)])  # 10 s iterations
    points = [p for name in ("adapters=1", "adapters=2") for p in capacity(warehouse, "hono", series=name)["points"]]
    assert [p["calls_per_s_per_instance"] for p in points] == pytest.approx([r["calls_per_s_per_instance"] for r in summary])
    assert [p["error_rate"] for p in points] == [0.0] * 4  # every call of the fixture log is a 200
    with open_warehouse(warehouse) as con:
        rows = con.execute(model_sql("reports/show_matrix"), {"run_id": "hono"}).fetchall()
    caption, columns, body = pivot(rows, _per_instance)["server"]
    assert (caption, columns) == ("series adapters", ["load", "1", "2"])
    assert body == [["2", "10.0 (0.00 %)", "8.0 (0.00 %)"], ["4", "18.0 (0.00 %)", "15.0 (0.00 %)"]]
    without = _ramp(tmp_path / "plain", loads, calls, "plain")  # no instance_key: the failure ratio alone
    assert records(without, "select max(calls_per_s_per_instance) as m from iteration_summary")[0]["m"] is None
