"""Fixture runs with known answers for the report tests, built from the explicit numbers below.

All iterations last 10 s (100 s for the comparison runs); requests are spread evenly over each iteration,
server side in an access log (durations in µs), client side in k6 JSON points.

- `pass-1` (campaign shop): vus 10, 20, 40; 100, 200, 400 server calls at 8, 10, 12 ms in turn (avg 10 ms),
  the client sees each call 5 ms later; every requirement holds, throughput doubles with the load.
- `broken-1` (campaign shop, after pass-1): vus 10, 20, 30, 40; 100, 200, 300, 400 calls at 10, 100, 300,
  400 ms (client +5 ms); `avg-under-250` breaks at iterations 3 and 4 (holds up to iteration 2, 20 calls/s);
  `busy-only` needs 1000 calls/s and is never judged. It also has vmstat (CPU idle 80 %, 5 % in
  iteration 4), jstat (a young GC every sample, a full GC in iteration 3) and docker stats.
- `sat-1` (campaign capacity): vus 10, 20, 30, 40, 50; 100, 200, 300, 305, 302 calls: throughput is flat
  from iteration 4 (+1.7 % for +33 % load), so the knee is iteration 3 (30 calls/s), the maximum 30.5 calls/s
  at iteration 4.
- `cmp-a`, `cmp-b`, `cmp-same` (campaign cmp): one iteration of 5,000 calls on /a and /b in turn; response
  times lognormal around 50 ms (seeds 1, 2, 3); cmp-b's are 20 % slower (x 1.2). cmp-same names cmp-a as its
  baseline (label `baseline`).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
ACCESS = {"kind": "access_log", "format": '%h %l %u %t "%r" %s %b %D', "duration_unit": "us"}
REQUIREMENTS = [
    {"id": "avg-under-250", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "min_calls_per_s": 5},
    {"id": "p95-under-500", "metric": "p95_ms", "op": "<", "threshold": 500, "expect": 200, "side": "server"},
    {"id": "errors-under-1pct", "metric": "error_rate", "op": "<", "threshold": 0.01, "side": "client"},
]
BUSY_ONLY = {"id": "busy-only", "metric": "avg_ms", "op": "<", "threshold": 50, "side": "server", "min_calls_per_s": 1000}
PLANS = {
    "pass-1": {"vus": [10, 20, 40], "calls": [100, 200, 400], "elapsed": [[8, 10, 12]] * 3},
    "broken-1": {"vus": [10, 20, 30, 40], "calls": [100, 200, 300, 400], "elapsed": [[10], [100], [300], [400]]},
    "sat-1": {"vus": [10, 20, 30, 40, 50], "calls": [100, 200, 300, 305, 302], "elapsed": [[20]] * 5},
}
CAMPAIGNS = {"pass-1": "shop", "broken-1": "shop", "sat-1": "capacity"}
OFFSETS = {"pass-1": 0, "broken-1": 3600, "sat-1": 7200, "cmp-a": 10800, "cmp-b": 14400, "cmp-same": 18000}
CMP_SEEDS = {"cmp-a": (1, 1.0), "cmp-b": (2, 1.2), "cmp-same": (3, 1.0)}


def windows(run_id: str, count: int, seconds: float = 10) -> list[tuple[datetime, datetime]]:
    """Iteration windows: `seconds` long, 5 s apart, from the run's start."""
    begin = START + timedelta(seconds=OFFSETS[run_id])
    return [(begin + timedelta(seconds=(seconds + 5) * i), begin + timedelta(seconds=(seconds + 5) * i + seconds))
            for i in range(count)]


def requests_of(window: tuple[datetime, datetime], elapsed_ms: list[float] | np.ndarray, labels=("/echo",)):
    """(started_at, label, elapsed_ms) spread evenly over the window."""
    start, end = window
    span = (end - start).total_seconds()
    return [(start + timedelta(seconds=span * n / len(elapsed_ms)), labels[n % len(labels)], float(ms))
            for n, ms in enumerate(elapsed_ms)]


def access_log(requests) -> str:
    return "".join(f'10.0.0.9 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] "GET {label} HTTP/1.1" 200 64 {round(ms * 1000)}\n'
                   for at, label, ms in requests)


def k6_json(requests) -> str:
    lines = []
    for at, label, ms in requests:
        ended = at + timedelta(milliseconds=ms)
        tags = {"expected_response": "true", "method": "GET", "name": label, "status": "200", "url": label}
        lines.append(json.dumps({"metric": "http_req_duration", "type": "Point",
                                 "data": {"time": ended.isoformat().replace("+00:00", "Z"), "value": ms, "tags": tags}}))
    return "\n".join(lines) + "\n"


def _iterations(run_id: str, loads: list[dict], seconds: float = 10) -> list[dict]:
    return [{"index": i + 1, "start": s.isoformat(), "end": e.isoformat(), "load": load}
            for i, ((s, e), load) in enumerate(zip(windows(run_id, len(loads), seconds), loads))]


def plan_requests(run_id: str, client_delay_ms: float | None = 5) -> tuple[list, list]:
    """Server and client requests of a PLANS run."""
    plan = PLANS[run_id]
    server = []
    for window, calls, cycle in zip(windows(run_id, len(plan["calls"])), plan["calls"], plan["elapsed"]):
        server += requests_of(window, [cycle[n % len(cycle)] for n in range(calls)])
    client = [] if client_delay_ms is None else [(at, label, ms + client_delay_ms) for at, label, ms in server]
    return server, client


def host_metrics(run_id: str) -> tuple[dict, list]:
    """vmstat -t, jstat -t (ISO-prefixed) and docker stats (JSON lines with times) over a PLANS run."""
    its = windows(run_id, len(PLANS[run_id]["calls"]))
    first, last = its[0][0] - timedelta(seconds=4), its[-1][1] + timedelta(seconds=4)
    moments = [first + timedelta(seconds=2 * k) for k in range(int((last - first).total_seconds() // 2) + 1)]
    vmstat = ["procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----",
              " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC"]
    jstat = ["Timestamp S0C S1C S0U S1U EC EU OC OU MC MU CCSC CCSU YGC YGCT FGC FGCT CGC CGCT GCT"]
    docker = []
    for k, at in enumerate(moments):
        idle = 5 if its[-1][0] <= at < its[-1][1] else 80
        vmstat.append(f" 2  0      0 900000  1000 20000    0    0     0     0  500  900 {90 - idle:2d}  5 {idle:2d}  0  0 "
                      f"{at:%Y-%m-%d %H:%M:%S}")
        full = int(at >= its[2][0] + timedelta(seconds=5))
        jstat.append(f"{at:%Y-%m-%dT%H:%M:%S.000Z} {100 + 2.0 * k:.1f} 0.0 1024.0 0.0 512.0 8192.0 {1000 + 300 * (k % 7):.1f} "
                     f"200000.0 {50000.0 + 500 * k:.1f} 4864.0 4500.0 512.0 400.0 {k} {0.01 * k:.3f} {full} "
                     f"{0.2 * full:.3f} 0 0.000 {0.01 * k + 0.2 * full:.3f}")
        docker.append(f"{at:%Y-%m-%dT%H:%M:%S}Z")
        docker.append(json.dumps({"BlockIO": "0B / 0B", "CPUPerc": "40.00%", "Container": "shop", "ID": "0123456789ab",
                                  "MemPerc": "30.00%", "MemUsage": f"{300 + k}MiB / 1GiB", "Name": "shop",
                                  "NetIO": f"{1 + k}MB / {2 + k}MB", "PIDs": "40"}))
    files = {"app/vmstat.log": "\n".join(vmstat) + "\n", "app/jstat.log": "\n".join(jstat) + "\n",
             "app/docker.log": "\n".join(docker) + "\n"}
    sources = [{"kind": "vmstat", "host": "app", "path": "app/vmstat.log"},
               {"kind": "jstat", "host": "app", "path": "app/jstat.log"},
               {"kind": "docker_stats", "host": "app", "path": "app/docker.log"}]
    return files, sources


def cmp_samples(run_id: str) -> np.ndarray:
    """The 5,000 response times (ms, to the µs the access log keeps) of a comparison run."""
    seed, factor = CMP_SEEDS[run_id]
    values = np.random.default_rng(seed).lognormal(np.log(50), 0.3, 5000) * factor
    return np.round(values * 1000) / 1000


def write_run(root: Path, run_id: str) -> Path:
    """Write one fixture run's bundle under root/run_id."""
    if run_id in CMP_SEEDS:
        server = requests_of(windows(run_id, 1, 100)[0], cmp_samples(run_id), labels=("/a", "/b"))
        files, sources = {"app/access.log": access_log(server)}, [{**ACCESS, "host": "app", "path": "app/access.log"}]
        requirements = [{"id": "p95-under-1000", "metric": "p95_ms", "op": "<", "threshold": 1000, "side": "server"}]
        labels = {"baseline": "cmp-a"} if run_id == "cmp-same" else {}
        return write_bundle(root / run_id, files, sources, _iterations(run_id, [{"vus": 50}], 100), requirements,
                            run_id=run_id, campaign="cmp", scenario="steady", labels=labels)
    server, client = plan_requests(run_id, None if run_id == "sat-1" else 5)
    files = {"app/access.log": access_log(server)}
    sources = [{**ACCESS, "host": "app", "path": "app/access.log"}]
    if client:
        files["lg/k6.json"] = k6_json(client)
        sources.append({"kind": "k6_json", "host": "lg", "path": "lg/k6.json"})
    requirements = list(REQUIREMENTS)
    if run_id == "broken-1":
        more_files, more_sources = host_metrics(run_id)
        files.update(more_files)
        sources += more_sources
        requirements.append(BUSY_ONLY)
    loads = [{"vus": vus} for vus in PLANS[run_id]["vus"]]
    return write_bundle(root / run_id, files, sources, _iterations(run_id, loads), requirements, run_id=run_id,
                        campaign=CAMPAIGNS[run_id], scenario="ramp")


def build_warehouse(root: Path, run_ids=("pass-1", "broken-1", "sat-1", "cmp-a", "cmp-b", "cmp-same"),
                    warehouse: Path | str | None = None) -> Path | str:
    """Every fixture run in one warehouse (a new file, unless a lake URL is given), ingested in time order."""
    warehouse = warehouse or root / "w.duckdb"
    for run_id in run_ids:
        ingest_bundle(write_run(root / "bundles", run_id), warehouse, progress=lambda message: None)
    return warehouse
