"""The conclusions and client_server_gap marts on the fixture runs: sentences with the expected numbers."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.unit.report.conftest import records
from tests.unit.report.runs import (
    ACCESS,
    PLANS,
    access_log,
    plan_requests,
    requests_of,
    windows,
    write_bundle,
)


def sentences(warehouse, run_id: str) -> dict[tuple[str, str], dict]:
    rows = records(warehouse, "select * from conclusions where run_id = $r", {"r": run_id})
    return {(row["topic"], row["subject"]): row for row in rows}


def test_a_requirement_broken_at_iteration_3(report_warehouse):
    rows = sentences(report_warehouse, "broken-1")
    broken = rows[("requirement", "avg-under-250")]
    assert broken["status"] == "broken" and broken["iteration"] == 4 and broken["value"] == 400
    margin = 100 * (250 - 400) / 250
    assert broken["sentence"] == (
        "avg-under-250: server avg 400.0 ms at 40.0 calls/s (iteration 4), limit < 250 ms: does not hold at "
        f"iterations 3, 4 (margin {margin:.0f} %); holds up to iteration 2, {200 / 10:.1f} calls/s.")
    assert rows[("requirements", "(all)")]["sentence"] == (
        "2 of 4 requirements hold at every judged iteration; 1 does not: avg-under-250. 1 not judged.")
    assert rows[("requirement", "busy-only")]["sentence"] == (
        "busy-only: not judged: the server side stayed under 1000 calls/s in every iteration.")
    assert rows[("health", "(all)")]["status"] == "warn"
    assert ("health", "app/vmstat/cpu_idle/4") in rows  # CPU idle 5 % in iteration 4 only


def test_a_run_that_passes_everything(report_warehouse):
    rows = sentences(report_warehouse, "pass-1")
    assert rows[("requirements", "(all)")]["sentence"] == "3 of 3 requirements hold at every judged iteration."
    server, _ = plan_requests("pass-1")
    p95 = np.percentile([ms for _, _, ms in server[:100]], 95)  # iteration 1
    assert rows[("requirement", "p95-under-500")]["sentence"].startswith(
        f"p95-under-500: server p95 {p95:.1f} ms at 10.0 calls/s (iteration 1), limit < 500 ms: holds at every "
        "judged iteration (1, 2, 3)")
    assert all(row["status"] in ("holds", "scales", "info", "ok") for row in rows.values())


def test_capacity_sentence_of_the_saturated_run(report_warehouse):
    row = sentences(report_warehouse, "sat-1")[("capacity", "server")]
    assert row["status"] == "saturated" and row["iteration"] == 3 and row["value"] == pytest.approx(30.5)
    assert row["sentence"].startswith("Capacity, server side: throughput follows the load up to iteration 3 "
                                      "(vus=30, 30.0 calls/s) and no further;")
    assert row["sentence"].endswith("The highest throughput was 30.5 calls/s, at iteration 4.")


def test_client_server_gap_per_iteration(report_warehouse):
    server, client = plan_requests("pass-1")
    gaps = records(report_warehouse, "select * from client_server_gap where run_id = 'pass-1' order by iteration")
    start = 0
    for row, calls in zip(gaps, PLANS["pass-1"]["calls"]):
        s = np.array([ms for _, _, ms in server[start:start + calls]])
        c = np.array([ms for _, _, ms in client[start:start + calls]])
        start += calls
        assert row["client_avg_ms"] - row["server_avg_ms"] == pytest.approx(c.mean() - s.mean())
        assert row["gap_avg_ms"] == pytest.approx(5.0)
        assert row["gap_avg_pct"] == pytest.approx(100 * (c.mean() / s.mean() - 1))
        assert row["gap_p95_ms"] == pytest.approx(np.percentile(c, 95) - np.percentile(s, 95))
    sentence = sentences(report_warehouse, "pass-1")[("client_server", "widest gap")]["sentence"]
    assert "a gap of 5.0 ms" in sentence


def test_capacity_says_once_per_side_when_the_load_generator_ran_out_of_cpu(tmp_path):
    """The caution is one row per side naming the iterations as ranges, not a tail on every series' sentence."""
    its = windows("sat-1", 4)
    server = [call for window, calls in zip(its, (100, 200, 300, 400)) for call in requests_of(window, [20.0] * calls)]
    vmstat = ["procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----",
              " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC"]
    busy = (its[1][0], its[2][1])  # iterations 2 and 3 (and the pause between them)
    for k in range(32):  # every 2 s from 4 s before iteration 1; idle 2 % inside iterations 2 and 3, else 50 %
        at = its[0][0] - timedelta(seconds=4) + timedelta(seconds=2 * k)
        idle = 2 if busy[0] <= at < busy[1] else 50
        vmstat.append(f" 1  0      0 900000  1000 20000    0    0     0     0  500  900 {95 - idle:2d}  5 {idle:2d}  0  0 "
                      f"{at:%Y-%m-%d %H:%M:%S}")
    iterations = [{"index": i + 1, "start": s.isoformat(), "end": e.isoformat(), "load": {"vus": 10 * (i + 1)}}
                  for i, (s, e) in enumerate(its)]
    root = write_bundle(tmp_path / "b", {"access.log": access_log(server), "lg/vmstat.log": "\n".join(vmstat) + "\n"},
                        [{**ACCESS, "host": "app", "path": "access.log"},
                         {"kind": "vmstat", "host": "lg", "path": "lg/vmstat.log", "role": "loadgen"}],
                        iterations, run_id="lg-busy")
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda message: None)
    rows = sentences(tmp_path / "w.duckdb", "lg-busy")
    assert "Caution" not in rows[("capacity", "server")]["sentence"]
    assert rows[("capacity", "server caution")]["sentence"] == (
        "Caution, server side: the load generator ran out of CPU in iterations 2-3, so the capacity figures of "
        "those iterations may measure it rather than the service.")
