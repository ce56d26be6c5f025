"""Synthetic runs with known answers for the data expectations and the clock-skew correction.

One plan of explicit numbers: three 10 s iterations with 5 s pauses, k6 sending 20, 40 and 80 requests/s
round robin to app1 and app2, each request at least 1 s away from an iteration boundary. Iterations
start at x.5 s, so whole-second stamps (access logs, vmstat -t) are never ambiguous. Every server log
line and host-metric stamp is written from the true (client) time plus that host's skew, the way a
host with a wrong clock writes it. Tests take the plan's numbers as the truth.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from tests.bundles import write_bundle

START = datetime(2026, 3, 1, 10, 0, 0, 500000, tzinfo=timezone.utc)
ITERATION_S = 10
PAUSE_S = 5
RATES = {1: 20, 2: 40, 3: 80}  # requests per second sent by k6 in [start + 1, end - 1) of each iteration
HOSTS = ("app1", "app2")
LATENCY_S = 0.0005  # client send -> server receipt
VMSTAT_FROM_S, VMSTAT_TO_S = -5, 46  # whole seconds sampled, relative to START (true time)
ACCESS_FORMAT = '%h %l %u %t "%r" %s %b %D'


@dataclass(frozen=True)
class Request:
    t: float  # true send time, epoch seconds (whole microseconds)
    host: str
    iteration: int
    elapsed_ms: int
    status: int


def window(iteration: int) -> tuple[float, float]:
    """Start and end of an iteration, epoch seconds."""
    start = START.timestamp() + (ITERATION_S + PAUSE_S) * (iteration - 1)
    return start, start + ITERATION_S


def iterations() -> list[dict]:
    """The manifest's iterations."""
    rows = []
    for index in RATES:
        start, end = window(index)
        rows.append({"index": index, "start": _iso(start), "end": _iso(end), "load": {"rate": RATES[index]}})
    return rows


def plan(seed: int = 7) -> list[Request]:
    """Every request of the run, in send order."""
    rng = np.random.default_rng(seed)
    requests = []
    number = 0
    for index, rate in RATES.items():
        start, _ = window(index)
        count = rate * (ITERATION_S - 2)
        offsets = 1 + (ITERATION_S - 2) * (np.arange(count) + rng.uniform(0, 1, count)) / count
        for offset in offsets:
            t = round((start + offset) * 1e6) / 1e6
            status = 503 if number % 50 == 7 else 200
            requests.append(Request(t, HOSTS[number % 2], index, 5 + (number * 7) % 23, status))
            number += 1
    return requests


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _clf(epoch: float) -> str:
    return datetime.fromtimestamp(math.floor(epoch), timezone.utc).strftime("%d/%b/%Y:%H:%M:%S +0000")


def access_log(requests: list[Request], host: str, skew_s: float = 0.0) -> str:
    """The host's access log as a server whose clock is `skew_s` ahead writes it (`%t`: whole seconds)."""
    mine = sorted((r for r in requests if r.host == host), key=lambda r: r.t)
    return "".join(
        f'10.0.0.9 - - [{_clf(r.t + LATENCY_S + skew_s)}] "POST /echo HTTP/1.1" {r.status} 1024 {r.elapsed_ms}\n'
        for r in mine
    )


def k6_point(t: float, elapsed_ms: float, status: int, url: str = "http://app/echo") -> str:
    """One http_req_duration point: k6 stamps the END of the request."""
    tags = {"expected_response": "true" if status < 400 else "false", "method": "POST", "name": url,
            "status": str(status), "url": url}
    point = {"metric": "http_req_duration", "type": "Point",
             "data": {"time": _iso(t + elapsed_ms / 1000), "value": elapsed_ms, "tags": tags}}
    return json.dumps(point) + "\n"


def k6_json(requests: list[Request]) -> str:
    header = json.dumps({"type": "Metric", "data": {"name": "http_req_duration", "type": "trend"},
                         "metric": "http_req_duration"}) + "\n"
    return header + "".join(k6_point(r.t, r.elapsed_ms, r.status) for r in requests)


def k6_summary(elapsed_ms: list[float], failed: int, count_offset: int = 0) -> str:
    """A --summary-export file computed with numpy (linear interpolation, as k6 does)."""
    values = np.asarray(elapsed_ms, dtype=float)
    duration = {"avg": float(values.mean()), "min": float(values.min()), "med": float(np.median(values)),
                "max": float(values.max()), "p(90)": float(np.percentile(values, 90)),
                "p(95)": float(np.percentile(values, 95))}
    metrics = {"http_reqs": {"count": len(values) + count_offset, "rate": 1.0}, "http_req_duration": duration,
               "http_req_failed": {"passes": failed, "fails": len(values) - failed, "value": failed / len(values)}}
    return json.dumps({"metrics": metrics})


def true_iteration(epoch: float) -> int | None:
    for index in RATES:
        start, end = window(index)
        if start <= epoch < end:
            return index
    return None


def cpu_user(epoch: float) -> int:
    """vmstat `us` of a sample taken at true time `epoch`: 10 x the iteration, 2 between iterations."""
    index = true_iteration(epoch)
    return 10 * index if index else 2


VMSTAT_HEADER = ("procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
                 " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n")


def vmstat_t(skew_s: float = 0.0, skip: tuple[int, int] | None = None, overrides: dict[int, int] | None = None) -> str:
    """`vmstat -t 1` from VMSTAT_FROM_S to VMSTAT_TO_S (true seconds after START, whole), stamped with the
    host's clock. `skip`: true seconds [a, b) with no line (a gap); `overrides`: row -> `us` value."""
    lines = [VMSTAT_HEADER]
    base = math.floor(START.timestamp())
    for row, second in enumerate(range(VMSTAT_FROM_S, VMSTAT_TO_S + 1)):
        if skip and skip[0] <= second < skip[1]:
            continue
        true_t = base + second
        us = cpu_user(true_t)
        idle = 93 - us
        us = (overrides or {}).get(row, us)  # an overridden `us` breaks the sum of the CPU columns
        stamp = datetime.fromtimestamp(math.floor(true_t + skew_s), timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        lines.append(f" 1  0      0 23152788  13024 1379312    0    0     0     0  163  348 {us:2d}  5 {idle:2d}  2  0 {stamp}\n")
    return "".join(lines)


JSTAT_COLUMNS = "S0C S1C S0U S1U EC EU OC OU MC MU CCSC CCSU YGC YGCT FGC FGCT CGC CGCT GCT"


def jstat(lines: int = 50, with_uptime: bool = True, restart_at: int | None = None) -> str:
    """`jstat -gc [-t]` at 1 s: a young GC every 3 lines; `restart_at`: the JVM restarts at that line."""
    rows = [("Timestamp " if with_uptime else "") + JSTAT_COLUMNS + "\n"]
    for k in range(lines):
        age = k if restart_at is None or k < restart_at else k - restart_at
        ygc = age // 3
        ygct = round(0.004 * ygc, 3)
        cells = [f"{100.0 + k:.1f}"] if with_uptime else []
        cells += ["512.0", "512.0", "0.0", "128.0", "8192.0", f"{1000 + 100 * (age % 3)}.0", "20480.0", "6000.0",
                  "30000.0", "29000.0", "4000.0", "3500.0", str(ygc), f"{ygct:.3f}", "0", "0.000", "0", "0.000",
                  f"{ygct:.3f}"]
        rows.append(" ".join(cells) + "\n")
    return "".join(rows)


def write_run(root: Path, run_id: str, skews: dict[str, float] | None = None, logs: dict[str, str] | None = None,
              files: dict[str, str] | None = None, sources: list[dict] | None = None, **manifest) -> Path:
    """A complete run: both access logs, one k6 JSON file with its summary, vmstat -t and jstat -t on app1.
    `skews` per host, `logs` replace an access log's text, `files`/`sources` add or replace raw files."""
    skews = skews or {}
    requests = plan()
    texts = {f"{host}/access.log": access_log(requests, host, skews.get(host, 0.0)) for host in HOSTS}
    texts.update({f"{host}/access.log": text for host, text in (logs or {}).items()})
    failed = sum(r.status >= 400 for r in requests)
    texts.update({
        "loadgen/k6.json": k6_json(requests),
        "loadgen/k6-summary.json": k6_summary([r.elapsed_ms for r in requests], failed),
        "app1/vmstat-t.log": vmstat_t(skews.get("app1", 0.0)),
        "app1/jstat.log": jstat(),
    })
    texts.update(files or {})
    all_sources = [
        {"kind": "access_log", "host": host, "path": f"{host}/access.log", "format": ACCESS_FORMAT, "duration_unit": "ms"}
        for host in HOSTS
    ] + [
        {"kind": "k6_json", "host": "loadgen", "path": "loadgen/k6.json"},
        {"kind": "k6_summary", "host": "loadgen", "path": "loadgen/k6-summary.json"},
        {"kind": "vmstat", "host": "app1", "path": "app1/vmstat-t.log"},
        {"kind": "jstat", "host": "app1", "path": "app1/jstat.log",
         "first_sample_at": _iso(START.timestamp() + VMSTAT_FROM_S)},
    ]
    for extra in sources or []:
        all_sources = [s for s in all_sources if s["path"] != extra["path"]] + [extra]
    return write_bundle(root, texts, all_sources, iterations(), run_id=run_id, **manifest)


def true_calls(requests: list[Request]) -> dict[tuple[str, int], int]:
    """Requests per (host, iteration) by true send time."""
    calls: dict[tuple[str, int], int] = {}
    for r in requests:
        calls[(r.host, r.iteration)] = calls.get((r.host, r.iteration), 0) + 1
    return calls
