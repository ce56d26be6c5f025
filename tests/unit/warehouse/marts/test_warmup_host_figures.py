"""A warm-up leaves its samples out of every host, JVM and container figure of an iteration (vmstat, jstat,
docker stats marts and the per-iteration health rules), and only those: checked against the raw files of
test_health_findings' run, parsed here with pandas, once with a 150 s warm-up and once without."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.unit.warehouse.marts.test_health_findings import (ITERATIONS, QUIET, _query, app1_jstat, app2_docker,
                                                   app2_jstat, loadgen_vmstat)

WARMUP_S = 150


def _ingest(tmp_path, warmup_s: float):
    files = {"lg1/vmstat.log": loadgen_vmstat(), "app1/jstat.log": app1_jstat(), "app2/jstat.log": app2_jstat(),
             "app2/docker.log": app2_docker()}
    sources = [{"kind": "vmstat", "host": "lg1", "path": "lg1/vmstat.log", "role": "loadgen"},
               {"kind": "jstat", "host": "app1", "path": "app1/jstat.log"},
               {"kind": "jstat", "host": "app2", "path": "app2/jstat.log", "first_sample_at": "2026-12-02T09:59:45Z"},
               {"kind": "docker_stats", "host": "app2", "path": "app2/docker.log"}]
    iterations = [{**it, "warmup_s": warmup_s} for it in ITERATIONS]
    root = write_bundle(tmp_path / "bundle", files, sources, iterations, run_id=f"warmup-{warmup_s:g}")
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    return tmp_path / "w.duckdb"


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory):
    return _ingest(tmp_path_factory.mktemp("warm"), WARMUP_S), _ingest(tmp_path_factory.mktemp("cold"), 0)


def _windows(warmup_s: float) -> list[tuple[int, pd.Timestamp, pd.Timestamp]]:
    """(iteration, measured from, end) of every iteration."""
    return [(it["index"], pd.Timestamp(it["start"]) + pd.Timedelta(seconds=warmup_s), pd.Timestamp(it["end"]))
            for it in ITERATIONS]


def _raw_vmstat() -> pd.DataFrame:
    rows = [line.split() for line in loadgen_vmstat().splitlines()[2:]]
    frame = pd.DataFrame({"id": [float(r[14]) for r in rows], "us": [float(r[12]) for r in rows],
                          "at": [pd.Timestamp(f"{r[17]} {r[18]}", tz="UTC") for r in rows]})
    return frame.iloc[1:]  # vmstat's first row is the average since boot


def _raw_jstat() -> pd.DataFrame:
    text = app1_jstat()  # each line: an ISO time the monitor wrote, then jstat's columns under its header
    names = ["at"] + text.splitlines()[0].split()
    frame = pd.read_csv(io.StringIO(text), sep=r"\s+", skiprows=1, names=names)
    frame["at"] = pd.to_datetime(frame["at"], utc=True)
    return frame


def _raw_docker() -> pd.DataFrame:
    lines = app2_docker().splitlines()
    at = [pd.Timestamp(t) for t in lines[0::2]]
    entries = [json.loads(e) for e in lines[1::2]]
    scale = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}

    def net_in(text: str) -> float:
        value = text.split(" / ")[0]
        unit = value.lstrip("0123456789.")
        return float(value[: len(value) - len(unit)]) * scale[unit]

    return pd.DataFrame({"at": at, "net_in": [net_in(e["NetIO"]) for e in entries],
                         "mem": [float(e["MemUsage"].split("MiB")[0]) * 1024**2 for e in entries]})


def test_vmstat_figures_and_the_cpu_rule_leave_out_exactly_the_warm_up(warehouses):
    warm, cold = warehouses
    raw = _raw_vmstat()
    got = {w: _query(db, "select iteration, samples, cpu_idle_avg, cpu_user_avg from host_iteration_stats "
                         "order by iteration") for w, db in ((WARMUP_S, warm), (0, cold))}
    evidence = _query(warm, "select iteration, evidence from health_findings where rule = 'loadgen_cpu' order by 1")
    for (i, since, end), (_, start, _) in zip(_windows(WARMUP_S), _windows(0)):
        kept = raw[(raw["at"] >= since) & (raw["at"] < end)]
        in_warmup = raw[(raw["at"] >= start) & (raw["at"] < since)]
        row = got[WARMUP_S].iloc[i - 1]
        assert (row["samples"], row["cpu_idle_avg"], row["cpu_user_avg"]) == (
            len(kept), pytest.approx(kept["id"].mean()), pytest.approx(kept["us"].mean()))
        assert got[0].iloc[i - 1]["samples"] - row["samples"] == len(in_warmup) == 3  # at :00, :01, :02
        assert json.loads(evidence.iloc[i - 1]["evidence"])["samples"] == len(kept)


def test_gc_counters_start_at_the_warm_ups_end_and_heap_figures_after_it(warehouses):
    warm, _ = warehouses
    raw = _raw_jstat()
    got = _query(warm, "select iteration, samples, gc_time_s, gc_overhead_pct, young_gc_count, old_used_max_kb, "
                       "counted_from_at from jvm_iteration_stats where host = 'app1' order by iteration")
    for i, since, end in _windows(WARMUP_S):
        before_end = raw[raw["at"] < end].iloc[-1]
        before_since = raw[raw["at"] < since].iloc[-1]
        kept = raw[(raw["at"] >= since) & (raw["at"] < end)]
        span = (before_end["at"] - before_since["at"]).total_seconds()
        row = got.iloc[i - 1]
        assert row["counted_from_at"] == before_since["at"]
        assert (row["samples"], row["young_gc_count"], row["old_used_max_kb"]) == (
            len(kept), before_end["YGC"] - before_since["YGC"], kept["OU"].max())
        assert row["gc_time_s"] == pytest.approx(before_end["GCT"] - before_since["GCT"])
        assert row["gc_overhead_pct"] == pytest.approx(100 * (before_end["GCT"] - before_since["GCT"]) / span)


def test_container_figures_of_an_iteration_leave_out_its_warm_up_and_the_run_keeps_it(warehouses):
    warm, cold = warehouses
    raw = _raw_docker()
    got = _query(warm, "select iteration, samples, net_in_bytes, mem_used_max_bytes, mem_trend_bytes_per_h "
                       "from container_stats order by iteration nulls first")
    whole_run = _query(cold, "select samples, net_in_bytes from container_stats where iteration is null")
    assert (got.iloc[0]["samples"], got.iloc[0]["net_in_bytes"]) == tuple(whole_run.iloc[0])
    for i, since, end in _windows(WARMUP_S):
        kept = raw[(raw["at"] >= since) & (raw["at"] < end)]
        before_end = raw[raw["at"] < end].iloc[-1]
        before_since = raw[raw["at"] < since].iloc[-1]
        row = got[got["iteration"] == i].iloc[0]
        slope = np.polyfit([t.timestamp() for t in kept["at"]], kept["mem"], 1)[0] * 3600
        assert (row["samples"], row["mem_used_max_bytes"]) == (len(kept), kept["mem"].max())
        assert row["net_in_bytes"] == pytest.approx(before_end["net_in"] - before_since["net_in"])
        assert row["mem_trend_bytes_per_h"] == pytest.approx(slope)
