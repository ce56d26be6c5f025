"""Health findings end to end: real vmstat, jstat, docker stats and access-log text through the readers and
the marts to the findings, with known answers. Each rule's own cases (one that fires, one that must not, the
thresholds) are data: tests/unit/models/int_health_findings__<family>.yaml.

Three iterations of 10 minutes (10:00-10:10, 10:11-10:21, 10:22-10:32 UTC), samples every minute:
- lg1 (loadgen): vmstat -t; CPU idle 60 %, then 0 % in every sample of iteration 2, then 40 %.
  It also has docker stats without timestamps (whole run only).
- app1 (sut): jstat with ISO-prefixed lines; a young GC between every two samples; old generation after GCs
  rising 1000 KB a minute (60000 KB/h, 30 % of its 200000 KB per hour); one full GC in iteration 2;
  6 s of GC per minute in iteration 3 (10 % overhead).
- app2 (sut): jstat placed by first_sample_at + uptime, stopping at 10:19:45 (no samples in iteration 3),
  old generation flat at 30000 KB; a container whose memory rises 4 MiB a minute (240 MiB/h, 23.4 % of its
  1 GiB limit per hour) while that JVM is flat; 60, 120 and 120 calls in its access log, with 1000, 1000 and
  10000 network bytes in per call.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.lakeserver import on_both_engines

QUIET = {"progress": lambda message: None}
T0 = datetime(2026, 12, 2, 9, 59, tzinfo=timezone.utc)
ITERATIONS = [
    {"index": 1, "start": "2026-12-02T10:00:00Z", "end": "2026-12-02T10:10:00Z"},
    {"index": 2, "start": "2026-12-02T10:11:00Z", "end": "2026-12-02T10:21:00Z"},
    {"index": 3, "start": "2026-12-02T10:22:00Z", "end": "2026-12-02T10:32:00Z"},
]
JSTAT_HEADER = ("Timestamp S0C S1C S0U S1U EC EU OC OU MC MU CCSC CCSU YGC YGCT FGC FGCT CGC CGCT GCT")
CALLS = {1: 60, 2: 120, 3: 120}


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=float(seconds))


def loadgen_vmstat() -> str:
    lines = ["procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----",
             " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC"]
    for k in range(35):  # 09:59:00 ... 10:33:00
        moment = _at(60 * k)
        idle = 60 if moment < _at(11 * 60) else 0 if moment < _at(22 * 60) else 40
        lines.append(f" 2  0      0 900000  1000 20000    0    0     0     0  500  900 {90 - idle:2d}  5 {idle:2d}  5  0 "
                     f"{moment:%Y-%m-%d %H:%M:%S}")
    return "\n".join(lines) + "\n"


def app1_samples() -> pd.DataFrame:
    k = np.arange(34)
    at = [_at(30 + 60 * i) for i in k]  # 09:59:30 ... 10:32:30
    ygct = np.where(k <= 22, 0.01 * k, 0.22 + 6.0 * (k - 22))
    fgc = (k >= 16).astype(int)  # 10:15:30, inside iteration 2
    fgct = 0.5 * fgc
    # a leak: the live set grows 1000 KB a minute; garbage promoted by the young GCs (3000 KB a minute) is
    # collected every fifth minute, when the old generation falls back to the live set
    old_used = 50000.0 + 1000 * k + 3000 * (k % 5)
    return pd.DataFrame({"at": at, "uptime": 500 + 60.0 * k, "OC": 200000.0, "OU": old_used, "YGC": k,
                         "YGCT": ygct, "FGC": fgc, "FGCT": fgct, "GCT": ygct + fgct})


def app1_jstat() -> str:
    lines = [JSTAT_HEADER]
    for row in app1_samples().itertuples():
        lines.append(f"{row.at:%Y-%m-%dT%H:%M:%S.000Z} {row.uptime:.1f} 0.0 1024.0 0.0 512.0 8192.0 4096.0 "
                     f"{row.OC:.1f} {row.OU:.1f} 4864.0 4500.0 512.0 400.0 {row.YGC} {row.YGCT:.3f} {row.FGC} "
                     f"{row.FGCT:.3f} 0 0.000 {row.GCT:.3f}")
    return "\n".join(lines) + "\n"


def app2_jstat() -> str:
    lines = [JSTAT_HEADER]
    for k in range(21):  # first sample 09:59:45, last 10:19:45
        lines.append(f"{100 + 60.0 * k:.1f} 0.0 1024.0 0.0 512.0 8192.0 4096.0 100000.0 30000.0 4864.0 4500.0 "
                     f"512.0 400.0 {k} {0.01 * k:.3f} 0 0.000 0 0.000 {0.01 * k:.3f}")
    return "\n".join(lines) + "\n"


def container_samples() -> pd.DataFrame:
    k = np.arange(34)
    at = [_at(50 + 60 * i) for i in k]  # 09:59:50 ... 10:32:50
    per_call = np.select([(k >= 1) & (k <= 10), (k >= 12) & (k <= 21), (k >= 23) & (k <= 32)],
                         [CALLS[1] * 1000 / 10, CALLS[2] * 1000 / 10, CALLS[3] * 10000 / 10], 0)
    return pd.DataFrame({"at": at, "mem_mib": 300 + 4 * k, "net_in": 1000 + np.cumsum(per_call)})


def app2_docker() -> str:
    lines = []
    for row in container_samples().itertuples():
        lines.append(f"{row.at:%Y-%m-%dT%H:%M:%S}Z")
        net_in = row.net_in / 1000 ** int(np.log10(row.net_in) // 3)
        unit = ["B", "kB", "MB", "GB"][int(np.log10(row.net_in) // 3)]
        lines.append(json.dumps({"BlockIO": "0B / 0B", "CPUPerc": "12.00%", "Container": "app2-svc", "ID": "0123456789ab",
                                 "MemPerc": "30.00%", "MemUsage": f"{row.mem_mib}MiB / 1GiB", "Name": "app2-svc",
                                 "NetIO": f"{net_in:.3g}{unit} / 0B", "PIDs": "40"}, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def loadgen_docker() -> str:
    entry = {"BlockIO": "0B / 0B", "CPUPerc": "95.00%", "Container": "k6", "ID": "abcdefabcdef", "MemPerc": "1.00%",
             "MemUsage": "80MiB / 7.7GiB", "Name": "k6", "NetIO": "1MB / 2MB", "PIDs": "9"}
    return "\n".join(json.dumps(entry) for _ in range(5)) + "\n"


def app2_access_log() -> str:
    lines = []
    for index, it in enumerate(ITERATIONS, start=1):
        start = datetime.fromisoformat(it["start"])
        for call in range(CALLS[index]):
            moment = start + timedelta(seconds=call * 590 / CALLS[index])
            lines.append(f'10.0.0.1 - - [{moment:%d/%b/%Y:%H:%M:%S} +0000] "GET /echo HTTP/1.1" 200 5 3')
    return "\n".join(lines) + "\n"


def build(tmp_path, thresholds: dict | None = None):
    files = {"lg1/vmstat.log": loadgen_vmstat(), "lg1/docker.jsonl": loadgen_docker(),
             "app1/jstat.log": app1_jstat(), "app2/jstat.log": app2_jstat(), "app2/docker.log": app2_docker(),
             "app2/access.log": app2_access_log()}
    sources = [
        {"kind": "vmstat", "host": "lg1", "path": "lg1/vmstat.log", "role": "loadgen"},
        {"kind": "docker_stats", "host": "lg1", "path": "lg1/docker.jsonl", "role": "loadgen"},
        {"kind": "jstat", "host": "app1", "path": "app1/jstat.log"},
        {"kind": "jstat", "host": "app2", "path": "app2/jstat.log", "first_sample_at": "2026-12-02T09:59:45Z"},
        {"kind": "docker_stats", "host": "app2", "path": "app2/docker.log"},
        {"kind": "access_log", "host": "app2", "path": "app2/access.log", "format": '%h %l %u %t "%r" %s %b %D',
         "duration_unit": "ms"},
    ]
    extra = {"thresholds": thresholds} if thresholds else {}
    root = write_bundle(tmp_path / "bundle", files, sources, ITERATIONS, run_id="health", **extra)
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, **QUIET)
    return warehouse


def _query(warehouse, sql, params=None) -> pd.DataFrame:
    with open_warehouse(warehouse) as con:
        return con.execute(sql, params).df()


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory):
    return build(tmp_path_factory.mktemp("health"))


warehouse = on_both_engines("warehouse_file", "health")  # the marts' checks on a file and on a lake


@pytest.fixture(scope="module")
def findings(warehouse) -> tuple:
    return warehouse, _query(warehouse, "select * from health_findings")


def one(frame: pd.DataFrame, host: str, rule: str, iteration: int | None) -> pd.Series:
    mask = (frame["host"] == host) & (frame["rule"] == rule)
    mask &= frame["iteration"].isna() if iteration is None else frame["iteration"] == iteration
    rows = frame[mask]
    assert len(rows) == 1, (host, rule, iteration, rows)
    return rows.iloc[0]


def test_grain_domains_and_every_host_iteration_covered(findings):
    warehouse, frame = findings
    assert not frame.duplicated(["run_id", "host", "subject", "rule", "iteration"]).any()
    assert set(frame["area"]) <= {"cpu", "memory", "gc", "network", "disk", "loadgen", "data"}
    assert set(frame["severity"]) <= {"ok", "warn", "fail"}
    assert frame["finding"].notna().all() and frame["evidence"].notna().all()
    covered = frame.dropna(subset=["iteration"]).groupby("host")["iteration"].apply(lambda s: sorted(set(s)))
    assert covered.to_dict() == {"app1": [1, 2, 3], "app2": [1, 2, 3], "lg1": [1, 2, 3]}
    for mart, key in (("host_iteration_stats", ["iteration", "host"]),
                      ("jvm_iteration_stats", ["iteration", "host", "source_path"]),
                      ("container_stats", ["host", "container", "iteration"])):
        assert not _query(warehouse, f"select * from {mart}").duplicated(key).any(), mart


def test_the_files_reach_every_family_with_the_answers_they_were_written_for(findings):
    """The severities the module's docstring describes, rule by rule, from the raw files."""
    _, frame = findings
    expected = {
        ("lg1", "loadgen_cpu"): ["ok", "fail", "ok"],  # idle 0 % in every sample of iteration 2
        ("app1", "full_gc"): ["ok", "warn", "ok"],  # one full GC at 10:15:30
        ("app1", "gc_overhead"): ["ok", "ok", "warn"],  # 6 s of GC a minute in iteration 3
        ("app1", "old_gen_fill"): ["ok", "ok", "ok"],  # 30 % of its capacity at most
        ("app2", "network_per_call"): ["ok", "ok", "warn"],  # 10x the bytes per call in iteration 3
    }
    for (host, rule), severities in expected.items():
        assert [one(frame, host, rule, i)["severity"] for i in (1, 2, 3)] == severities, (host, rule)
    jstat = frame[(frame["host"] == "app2") & (frame["rule"] == "samples") & (frame["subject"] == "jstat")]
    assert jstat.sort_values("iteration")["severity"].tolist() == ["ok", "ok", "warn"]  # stops at 10:19:45
    untimed = frame[(frame["host"] == "lg1") & (frame["subject"] == "docker_stats")]
    assert untimed["severity"].tolist() == ["warn"] * 3 and all("no timestamps" in t for t in untimed["finding"])
    assert "(0.2 calls/s)" in one(frame, "lg1", "loadgen_cpu", 2)["finding"]  # 120 server-side calls in 600 s
    assert json.loads(one(frame, "app2", "network_per_call", 3)["evidence"])["calls"] == 120
    assert one(frame, "app1", "old_gen_trend", None)["severity"] == "warn"
    assert one(frame, "app2", "old_gen_trend", None)["severity"] == "ok"
    trend = one(frame, "app2", "container_memory_trend", None)
    assert trend["severity"] == "warn" and "outside the Java heap" in trend["finding"]


def test_gc_overhead_and_old_generation_slope_from_the_jstat_file(findings):
    warehouse, frame = findings
    samples = app1_samples()
    expected = []
    for it in ITERATIONS:  # last sample before end minus last sample before start
        before_end = samples[samples["at"] < datetime.fromisoformat(it["end"])].iloc[-1]
        before_start = samples[samples["at"] < datetime.fromisoformat(it["start"])].iloc[-1]
        span = (before_end["at"] - before_start["at"]).total_seconds()
        expected.append(100 * (before_end["GCT"] - before_start["GCT"]) / span)
    got = _query(warehouse, "select gc_overhead_pct from jvm_iteration_stats where host = 'app1' order by iteration")
    assert got["gc_overhead_pct"].tolist() == pytest.approx(expected)
    assert expected[2] == pytest.approx(10.0)
    # after a GC (every sample but the first follows one) that left the old generation no bigger
    after_gc = samples[(samples["YGC"].diff() > 0) & (samples["OU"].diff() <= 0)]
    assert len(after_gc) == 6
    seconds = np.array([(t - T0).total_seconds() for t in after_gc["at"]])
    slope = np.polyfit(seconds, after_gc["OU"].to_numpy(), 1)[0] * 3600
    evidence = json.loads(one(frame, "app1", "old_gen_trend", None)["evidence"])
    assert evidence["slope_kb_per_h"] == pytest.approx(slope) == pytest.approx(60000)
    assert evidence["pct_of_capacity_per_h"] == pytest.approx(30.0)


def test_container_memory_trend_from_the_docker_file(findings):
    warehouse, frame = findings
    samples = container_samples()
    seconds = np.array([(t - T0).total_seconds() for t in samples["at"]])
    slope = np.polyfit(seconds, samples["mem_mib"].to_numpy() * 1024**2, 1)[0] * 3600
    got = _query(warehouse, "select mem_trend_bytes_per_h from container_stats where iteration is null "
                            "and container = 'app2-svc'")
    assert got["mem_trend_bytes_per_h"][0] == pytest.approx(slope) == pytest.approx(240 * 1024**2)
    trend = one(frame, "app2", "container_memory_trend", None)
    assert json.loads(trend["evidence"])["pct_of_limit_per_h"] == pytest.approx(100 * 240 / 1024, abs=1e-3)


def test_reingest_replaces_the_host_metrics_of_the_run(warehouse_file):
    warehouse, frame = warehouse_file, _query(warehouse_file, "select * from health_findings")
    counts = "select (select count(*) from host_samples), (select count(*) from health_findings), " \
             "(select count(*) from host_metric_sources)"
    before = _query(warehouse, counts).values.tolist()
    ingest_bundle(warehouse.parent / "bundle", warehouse, **QUIET)
    assert _query(warehouse, counts).values.tolist() == before
    assert before[0][1] == len(frame)


def test_thresholds_from_the_manifest(tmp_path):
    warehouse = build(tmp_path, thresholds={"gc_overhead_max_pct": 20, "loadgen_cpu_idle_min_pct": 0})
    frame = _query(warehouse, "select * from health_findings")
    assert one(frame, "app1", "gc_overhead", 3)["severity"] == "ok"
    assert one(frame, "lg1", "loadgen_cpu", 2)["severity"] == "ok"


def test_a_restarting_container_counts_every_byte_and_its_memory_trend_per_life(tmp_path):
    # the container leaks 2 MiB a minute and restarts every 12 minutes (memory back to 200 MiB, counters to
    # 0); it receives 1000 bytes a minute
    docker, truth = [], []
    net = 0
    for k in range(33):
        moment = _at(30 + 60 * k)
        age = k % 12
        net = 0 if k and age == 0 else net + (1000 if k else 0)
        memory = 200 + 2 * age
        truth.append((moment, net, memory, k > 0 and age == 0))
        docker += [f"{moment:%Y-%m-%dT%H:%M:%S}Z", json.dumps({
            "BlockIO": "0B / 0B", "CPUPerc": "1.00%", "Container": "svc", "ID": "0123456789ab", "MemPerc": "1.00%",
            "MemUsage": f"{memory}MiB / 1GiB", "Name": "svc", "NetIO": f"{net}B / 0B", "PIDs": "4"})]
    root = write_bundle(tmp_path / "b", {"docker.log": "\n".join(docker) + "\n"},
                        [{"kind": "docker_stats", "host": "app", "path": "docker.log"}], ITERATIONS)
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    got = _query(tmp_path / "w.duckdb", "select iteration, net_in_bytes, restarts, mem_trend_bytes_per_h "
                                        "from container_stats order by iteration nulls first")
    # bytes: each sample's increase over the previous one, or its whole value after a restart
    increase = [0] + [now[1] - before[1] if now[1] >= before[1] else now[1] for before, now in zip(truth, truth[1:])]
    expected = [(None, sum(increase), sum(row[3] for row in truth))]
    for it in ITERATIONS:
        start, end = datetime.fromisoformat(it["start"]), datetime.fromisoformat(it["end"])
        first = max(k for k, row in enumerate(truth) if row[0] < start)
        last = max(k for k, row in enumerate(truth) if row[0] < end)
        expected.append((it["index"], sum(increase[first + 1:last + 1]), sum(row[3] for row in truth[first + 1:last + 1])))
    assert [(None if pd.isna(i) else int(i), n, r) for i, n, r in got[["iteration", "net_in_bytes", "restarts"]]
            .itertuples(index=False)] == expected
    assert got["mem_trend_bytes_per_h"][0] == pytest.approx(2 * 60 * 1024**2)  # 120 MiB/h in every life
    frame = _query(tmp_path / "w.duckdb", "select * from health_findings")
    trend = one(frame, "app", "container_memory_trend", None)
    assert trend["severity"] == "warn" and "120.0 MiB/h" in trend["finding"]
    restarts = [one(frame, "app", "container_restart", it["index"]) for it in ITERATIONS]
    assert [row["severity"] for row in restarts] == ["warn" if n else "ok" for _, _, n in expected[1:]]
    assert "restarted 1 time in iteration" in restarts[[n for _, _, n in expected[1:]].index(1)]["finding"]
