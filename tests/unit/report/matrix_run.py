"""A 3 x 3 matrix run with known answers, for the report's layout checks (small multiples, one caution per side,
series in the order of their values, nothing overlapping at 1400 px).

`matrix-1` (campaign gateway): message_size 7, 1024, 102400 (outermost) x vus 2, 4, 8, iterations of 10 s.
Calls per iteration in CALLS: size 7 saturates at vus 8 (knee iteration 2), size 1024 scales throughout,
size 102400 saturates at vus 4 (knee iteration 7). Server calls in an access log, the client sees each 5 ms
later (k6 JSON). The load generator's vmstat has 2 % idle CPU all along (a caution for every iteration), the
service's vmstat reads and writes blocks (vmstat bi/bo).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.unit.report.runs import ACCESS, access_log, k6_json, requests_of

START = datetime(2026, 3, 3, 9, 0, tzinfo=timezone.utc)
SIZES, VUS = (7, 1024, 102400), (2, 4, 8)
CALLS = {7: (200, 400, 420), 1024: (150, 300, 600), 102400: (100, 110, 112)}
ELAPSED_MS = {7: 4.0, 1024: 6.0, 102400: 40.0}
VMSTAT_HEADER = ["procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----",
                 " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC"]


def loads() -> list[dict]:
    """The matrix in run order: the first key outermost."""
    return [{"message_size": size, "vus": vus} for size in SIZES for vus in VUS]


def windows() -> list[tuple[datetime, datetime]]:
    return [(START + timedelta(seconds=15 * i), START + timedelta(seconds=15 * i + 10)) for i in range(len(loads()))]


def _vmstat(idle: int, blocks: tuple[int, int]) -> str:
    lines = list(VMSTAT_HEADER)
    its = windows()
    at = its[0][0] - timedelta(seconds=4)
    while at < its[-1][1] + timedelta(seconds=4):
        lines.append(f" 2  0      0 18329000  1000 20000    0    0 {blocks[0]:5d} {blocks[1]:5d}  500  900 "
                     f"{95 - idle:2d}  5 {idle:2d}  0  0 {at:%Y-%m-%d %H:%M:%S}")
        at += timedelta(seconds=2)
    return "\n".join(lines) + "\n"


def build_matrix_warehouse(root: Path) -> Path:
    """matrix-1 ingested into root/w.duckdb."""
    server = []
    for window, load in zip(windows(), loads()):
        calls = CALLS[load["message_size"]][VUS.index(load["vus"])]
        server += requests_of(window, [ELAPSED_MS[load["message_size"]] * (1 + load["vus"] / 8)] * calls)
    client = [(at, label, ms + 5) for at, label, ms in server]
    files = {"app/access.log": access_log(server), "lg/k6.json": k6_json(client),
             "app/vmstat.log": _vmstat(60, (120, 3400)), "lg/vmstat.log": _vmstat(2, (0, 8))}
    sources = [{**ACCESS, "host": "app", "path": "app/access.log"},
               {"kind": "k6_json", "host": "lg", "path": "lg/k6.json"},
               {"kind": "vmstat", "host": "app", "path": "app/vmstat.log"},
               {"kind": "vmstat", "host": "lg", "path": "lg/vmstat.log", "role": "loadgen"}]
    iterations = [{"index": i + 1, "start": s.isoformat(), "end": e.isoformat(), "load": load}
                  for i, ((s, e), load) in enumerate(zip(windows(), loads()))]
    requirements = [{"id": "p95-under-100", "metric": "p95_ms", "op": "<", "threshold": 100, "side": "server"},
                    {"id": "errors-under-1pct", "metric": "error_rate", "op": "<", "threshold": 0.01, "side": "client"}]
    bundle = write_bundle(root / "matrix-1", files, sources, iterations, requirements, run_id="matrix-1",
                          campaign="gateway", scenario="user-payload-matrix", capacity={"load_key": "vus"})
    ingest_bundle(bundle, root / "w.duckdb", progress=lambda message: None)
    return root / "w.duckdb"
