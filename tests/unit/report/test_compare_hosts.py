"""`compare`'s host and JVM figures: highest CPU, heap and threads per iteration and host, A against B, and the
means tested as avg_ms is (Welch), on two fixture runs whose samples are written here (answers from numpy)."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tasks.report.compare_hosts import compare_hosts
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 12, 2, 10, 0, tzinfo=timezone.utc)
SECONDS = 30
# per run: CPU busy %, heap used KiB (eden + survivors + old) and java's threads at sample k (one a second)
RUNS = {
    "hosts-a": (lambda k: 30 + k % 5, lambda k: 1000 + 10 * k + 200 + 40000, lambda k: 40),
    "hosts-b": (lambda k: 60 + k % 7, lambda k: 1000 + 30 * k + 200 + 40000, lambda k: 40 + k // 3),
}


def _files(run_id: str, begin: datetime) -> dict[str, str]:
    busy, heap, threads = RUNS[run_id]
    vmstat = ["procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----",
              " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC",
              # vmstat's first row is the average since boot: never a sample of the run
              f" 1  0      0 900000  1000 20000    0    0     0     0  500  900 90  9  1  0  0 "
              f"{begin - timedelta(seconds=1):%Y-%m-%d %H:%M:%S}"]
    jstat = ["Timestamp S0C S1C S0U S1U EC EU OC OU MC MU CCSC CCSU YGC YGCT FGC FGCT CGC CGCT GCT"]
    pidstat = ["Linux 6.1.0 (app) \t2026-12-02 \t_x86_64_\t(2 CPU)\n",
               "# Time        UID       PID    %usr %system  %guest   %wait    %CPU   CPU  minflt/s  majflt/s"
               "     VSZ     RSS   %MEM threads   fd-nr  Command"]
    for k in range(SECONDS):
        at = begin + timedelta(seconds=k)
        vmstat.append(f" 2  0      0 900000  1000 20000    0    0     0     0  500  900 {busy(k) - 5:2d}  5 "
                      f"{100 - busy(k):2d}  0  0 {at:%Y-%m-%d %H:%M:%S}")
        eden = heap(k) - 200 - 40000  # survivors 200 (S1U), old 40000
        jstat.append(f"{at:%Y-%m-%dT%H:%M:%S.000Z} {100 + k:.1f} 1024.0 1024.0 0.0 200.0 8192.0 {eden:.1f} 200000.0 40000.0 "
                     f"4864.0 4500.0 512.0 400.0 {k} {0.01 * k:.3f} 0 0.000 0 0.000 {0.01 * k:.3f}")
        pidstat.append(f"{at:%H:%M:%S}     1000      4242   40.00   10.00    0.00    0.00   50.00     1      0.00      "
                       f"0.00  900000  200000   2.00  {threads(k):6d}      40  java")
    return {"app/vmstat.log": "\n".join(vmstat) + "\n", "app/jstat.log": "\n".join(jstat) + "\n",
            "app/pidstat.log": "\n".join(pidstat) + "\n"}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare-hosts")
    for offset, run_id in enumerate(RUNS):
        begin = START + timedelta(hours=offset)
        sources = [{"kind": "vmstat", "host": "app", "path": "app/vmstat.log"},
                   {"kind": "jstat", "host": "app", "path": "app/jstat.log"},
                   {"kind": "pidstat", "host": "app", "path": "app/pidstat.log", "timezone": "UTC"}]
        # the iteration holds every sample (the last one is at SECONDS - 1)
        iterations = [{"index": 1, "start": begin.isoformat(), "end": (begin + timedelta(seconds=SECONDS)).isoformat(),
                       "load": {"vus": 10}}]
        bundle = write_bundle(root / run_id, _files(run_id, begin), sources, iterations, run_id=run_id)
        ingest_bundle(bundle, root / "w.duckdb", progress=lambda message: None)
    return root / "w.duckdb"


def test_highest_and_mean_per_host_against_numpy(warehouse):
    with open_warehouse(warehouse) as con:
        changes = {c.metric: c for c in compare_hosts(con, "hosts-a", "hosts-b")}
    k = np.arange(SECONDS)
    for figure, index in (("cpu_busy", 0), ("heap_used", 1), ("threads", 2)):
        a, b = (np.array([RUNS[run][index](i) for i in k], dtype=float) for run in RUNS)
        unit = {"cpu_busy": "_pct", "heap_used": "_kb", "threads": ""}[figure]
        highest, mean = changes[f"{figure}_max{unit}"], changes[f"{figure}_avg{unit}"]
        assert (highest.iteration, highest.host, highest.a, highest.b) == (1, "app", a.max(), b.max())
        assert highest.change_pct == pytest.approx(100 * (b.max() / a.max() - 1))
        assert (highest.test, highest.direction) == ("none", "n/a")  # one sample: no test, as max_ms
        assert (mean.a, mean.b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))
        assert (mean.samples_a, mean.samples_b) == (SECONDS, SECONDS)
        with warnings.catch_warnings():  # A's threads are constant: scipy warns, and Welch's test still holds
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = stats.ttest_ind(b, a, equal_var=False).pvalue
        assert mean.test == "welch t" and mean.p_value == pytest.approx(expected)
        assert (mean.beyond_noise, mean.direction) == (True, "worse")  # every figure rose, far beyond noise


def test_the_compare_command_prints_the_host_table(warehouse):
    cli = str(Path(sys.executable).parent / "perfcampaign")
    result = subprocess.run([cli, "compare", "hosts-a", "hosts-b", "-w", str(warehouse), "--only", "hosts", "-f",
                             "json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["metric"] for r in rows] == ["cpu_busy_max_pct", "cpu_busy_avg_pct", "heap_used_max_kb",
                                           "heap_used_avg_kb", "threads_max", "threads_avg"]
    assert rows[4]["b"] == 40 + (SECONDS - 1) // 3
