"""Health rules of sar and pidstat (nic_busy, disk_busy, process_cpu, thread_growth): a fixture with known answers.

Two iterations, 10:00:00-10:00:10 and 10:00:10-10:00:20 UTC, one sample a second on a 2-CPU host:
- eth0 receives 4 Gbps in iteration 1 and 9 Gbps in iteration 2 (90 % of the default 10 Gbps link);
  lo moves 50 Gbps throughout and is never judged;
- vda is busy 95 % of the time in iteration 1 and 10 % in iteration 2;
- java uses 100 % of one CPU (50 % of the host) in iteration 1 and 190 % (95 %) in iteration 2; its threads
  grow from 20 to 29 in iteration 1 (+45 %) and stay at 30 in iteration 2.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

ITERATIONS = [
    {"index": 1, "start": "2026-12-02T10:00:00Z", "end": "2026-12-02T10:00:10Z"},
    {"index": 2, "start": "2026-12-02T10:00:10Z", "end": "2026-12-02T10:00:20Z"},
]
FIRST_LINE = "Linux 6.1.0 (box) \t2026-12-02 \t_x86_64_\t(2 CPU)\n\n"
KB_PER_S_AT_GBPS = 1e9 / 8 / 1024


def _sar() -> str:
    lines = [FIRST_LINE]
    for second in range(20):
        at, before = f"10:00:{second:02d}", f"10:00:{max(second - 1, 0):02d}"
        eth0 = (4 if second < 10 else 9) * KB_PER_S_AT_GBPS
        util = 95.0 if second < 10 else 10.0
        lines.append(f"{before}          DEV       tps     rkB/s     wkB/s     dkB/s   areq-sz    aqu-sz     await     %util\n"
                     f"{at}          vda     10.00      0.00    400.00      0.00     40.00      1.00      2.00     {util:.2f}\n\n"
                     f"{before}        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil\n"
                     f"{at}           lo  1000.00  1000.00 {50 * KB_PER_S_AT_GBPS:.2f} {50 * KB_PER_S_AT_GBPS:.2f}      0.00      0.00      0.00      0.00\n"
                     f"{at}         eth0  1000.00   100.00 {eth0:.2f}     10.00      0.00      0.00      0.00      0.00\n\n")
    return "".join(lines)


def _pidstat() -> str:
    lines = [FIRST_LINE, "# Time        UID       PID    %usr %system  %guest   %wait    %CPU   CPU  minflt/s  majflt/s"
                         "     VSZ     RSS   %MEM threads   fd-nr  Command\n"]
    for second in range(20):
        cpu = 100.0 if second < 10 else 190.0
        threads = 20 + second if second < 10 else 30
        lines.append(f"10:00:{second:02d}     1000      4242  {cpu - 10:.2f}   10.00    0.00    0.00  {cpu:.2f}     1"
                     f"      0.00      0.00  900000  200000   2.00  {threads:6d}      40  java\n")
    return "".join(lines)


def _findings(tmp_path, **thresholds) -> dict[tuple[str, int], tuple[str, dict]]:
    root = write_bundle(tmp_path / "bundle", {"box/sar.log": _sar(), "box/pidstat.log": _pidstat()},
                        [{"kind": "sar", "host": "box", "path": "box/sar.log", "timezone": "UTC"},
                         {"kind": "pidstat", "host": "box", "path": "box/pidstat.log", "timezone": "UTC"}],
                        ITERATIONS, thresholds=thresholds)
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda message: None)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        rows = con.execute("select rule, subject, iteration, severity, evidence from health_findings "
                           "where rule in ('nic_busy', 'disk_busy', 'process_cpu', 'thread_growth')").fetchall()
    return {(rule, subject, iteration): (severity, json.loads(evidence)) for rule, subject, iteration, severity, evidence in rows}


def test_saturated_nic_and_disk_a_process_taking_the_cpu_and_growing_threads_are_found(tmp_path):
    found = _findings(tmp_path)
    assert {key: severity for key, (severity, _) in found.items()} == {
        ("nic_busy", "eth0", 1): "ok", ("nic_busy", "eth0", 2): "warn",
        ("disk_busy", "vda", 1): "warn", ("disk_busy", "vda", 2): "ok",
        ("process_cpu", "java 4242", 1): "ok", ("process_cpu", "java 4242", 2): "warn",
        ("thread_growth", "java 4242", 1): "warn", ("thread_growth", "java 4242", 2): "ok",
    }  # and lo, at 50 Gbps, is not judged
    assert found[("nic_busy", "eth0", 2)][1]["rx_gbps"] == pytest.approx(9, abs=1e-3)
    assert found[("process_cpu", "java 4242", 2)][1]["cpu_share_pct_avg"] == 95
    assert (found[("thread_growth", "java 4242", 1)][1]["threads_first"],
            found[("thread_growth", "java 4242", 1)][1]["threads_last"]) == (20, 29)


def test_thresholds_from_the_manifest_move_the_findings(tmp_path):
    found = _findings(tmp_path, nic_link_gbps=100, disk_util_max_pct=99, process_cpu_max_pct=40,
                      thread_growth_max_pct=50)
    assert {key: severity for key, (severity, _) in found.items() if severity == "warn"} == {
        ("process_cpu", "java 4242", 1): "warn", ("process_cpu", "java 4242", 2): "warn"}
