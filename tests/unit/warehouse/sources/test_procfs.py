"""The procfs monitor: its real shell sampler run here for a few seconds against known traffic on lo, disk
writes and a process with a known thread count; the marts checked against /proc read by this test the moment
each sample was written, and against python over the raw file. Bad input: cut blocks, garbage, counters that
go back, a restarted process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tasks.stage.procfs_sampler import procfs_command
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.independent import independent_sar
from tests.unit.warehouse.sources.test_sysstat import (
    CHILD,
    _cpu_ticks,
    _disk_device,
    _lo_counters,
    _sectors_written,
    _send_over_lo,
    _status,
    burning,
)

QUIET = {"progress": lambda message: None}
LO_BYTES = 256 * 1024 * 1024
DISK_BYTES = 32 * 1024 * 1024


class Sampler:
    """The sampler writing to a file, which is polled: /proc is read the moment each `## at` line appears."""

    def __init__(self, command: str, out: Path, snapshot):
        self.out, self._snapshot, self.at_sample = out, snapshot, {}
        with open(out, "w") as handle:  # ahead of the busy machine where allowed, as test_sysstat's samplers
            self.process = subprocess.Popen(["nice", "-n", "-15", "sh", "-c", command], stdout=handle,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll)
        self._poller.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            for line in self.out.read_text().splitlines():
                if line.startswith("## at ") and line not in self.at_sample:
                    self.at_sample[line] = self._snapshot()
            time.sleep(0.005)

    def wait_for_samples(self, count: int) -> None:
        deadline = time.monotonic() + 30
        while len(self.at_sample) < count:
            assert time.monotonic() < deadline, "the procfs sampler wrote no sample"
            time.sleep(0.02)

    def stop(self) -> tuple[dict, dict]:
        """/proc at the first and at the last whole sample: the one before the last `## at` (which the stop may cut)."""
        self.process.terminate()
        self.process.wait(10)
        self._stop.set()
        self._poller.join(10)
        first, *_, last, _ = self.at_sample.values()
        return first, last


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The sampler, watching a child by pid file, while 256 MB cross lo and 32 MB are written and fsync'ed."""
    folder = tmp_path_factory.mktemp("procfs")
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        (folder / "child.pid").write_text(f"{child.pid}\n")
        device = _disk_device(folder)
        snapshot = lambda: {"lo": _lo_counters(), "sectors": _sectors_written(device),
                            "ticks": _cpu_ticks(child.pid), "status": _status(child.pid)}
        sar = _start_sar(folder / "sar.log")  # the same seconds through sysstat, where it is installed
        sampler = Sampler(procfs_command(1, [], str(folder / "child.pid"), None), folder / "procfs.log", snapshot)
        sampler.wait_for_samples(2)
        with burning(child):
            _send_over_lo(LO_BYTES)
            with open(folder / "written.bin", "wb") as handle:
                handle.write(os.urandom(DISK_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
        sampler.wait_for_samples(len(sampler.at_sample) + 3)  # the work's last interval and one more, written whole
        first, last = sampler.stop()
        if sar:
            sar.send_signal(2)  # SIGINT: sar prints its averages and exits
            sar.wait(10)
    finally:
        child.stdin.close()
        child.wait(10)
    (folder / "written.bin").unlink()
    text = (folder / "procfs.log").read_text()
    times = [pd.Timestamp(line.split()[2]) for line in sampler.at_sample][:-1]
    middle = times[-1] - pd.Timedelta(milliseconds=1)  # both iterations hold a rated sample
    iterations = [(1, times[0] - pd.Timedelta(seconds=2), middle), (2, middle, times[-1] + pd.Timedelta(seconds=2))]
    root = write_bundle(folder / "bundle", {"h/procfs.log": text}, [{"kind": "procfs", "host": "h", "path": "h/procfs.log"}],
                        [{"index": i, "start": s.isoformat(), "end": e.isoformat()} for i, s, e in iterations])
    report = ingest_bundle(root, folder / "w.duckdb", **QUIET)
    return {"text": text, "report": report, "warehouse": folder / "w.duckdb", "device": device, "pid": child.pid,
            "proc": (first, last), "iterations": iterations, "last_whole": times[-1],
            "sar": (folder / "sar.log").read_text() if sar else None}


def _start_sar(out: Path) -> subprocess.Popen | None:
    """sar -n DEV 1, returned once it printed its first interval (before any of the test's traffic)."""
    if not shutil.which("sar"):
        return None
    with open(out, "w") as handle:
        sar = subprocess.Popen(["sar", "-n", "DEV", "1"], stdout=handle, stderr=subprocess.DEVNULL,
                               env={**os.environ, "TZ": "UTC", "LC_ALL": "C", "S_TIME_FORMAT": "ISO"})
    deadline = time.monotonic() + 10
    while " lo " not in out.read_text():
        assert time.monotonic() < deadline, "sar printed no sample"
        time.sleep(0.02)
    return sar


def _query(recorded, sql: str, params=None) -> pd.DataFrame:
    with duckdb.connect(str(recorded["warehouse"]), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


def _rated(recorded, condition: str, params=None) -> pd.DataFrame:
    """procfs rows with a rate (every sample but the first of its series), with the seconds each one covers."""
    got = _query(recorded, f"select * from host_samples where kind = 'procfs' and {condition} and sampled_at <= $last "
                 "order by sampled_at", {"last": recorded["last_whole"].to_pydatetime(), **(params or {})})
    got["seconds"] = got.sampled_at.diff().dt.total_seconds()
    return got.iloc[1:]


def test_the_sampler_ran_clean_and_its_counters_became_rates(recorded):
    (source,) = recorded["report"].sources
    last_block = recorded["text"].count("\n", 0, recorded["text"].rfind("## at ")) + 1
    rejected = _query(recorded, "select line_no from rejected_lines").line_no
    assert source.rows > 0 and (rejected > last_block).all()  # only the block the stop may have cut
    keys = {"host_samples": "line_no", "host_network_stats": "interface, iteration", "host_disk_stats": "disk, iteration",
            "process_stats": "pid, iteration"}  # the staging model's and the marts' grains are keys here too
    for table, key in keys.items():
        rows, distinct = _query(recorded, f"select count(*), count(distinct ({key})) from {table}").iloc[0]
        assert rows == distinct > 0, table
    assert recorded["text"].startswith(f"## procfs clk_tck={os.sysconf('SC_CLK_TCK')} page_size={os.sysconf('SC_PAGE_SIZE')}")


def test_network_bytes_match_proc_net_dev(recorded):
    got = _rated(recorded, "interface = 'lo'")
    first, last = recorded["proc"]
    proc_rx, proc_tx = (last["lo"][i] - first["lo"][i] for i in (0, 1))
    rx, tx = ((got[column] * got.seconds).sum() for column in ("rx_bytes_per_s", "tx_bytes_per_s"))
    print(f"lo bytes: procfs {rx:.0f}, /proc {proc_rx}")
    # The samples bracket the test's own 256 MB (the first before it was sent, the last after): both counts hold
    # them. How far they differ beyond that is other traffic on lo in the ms between the sampler's read and this
    # test's (at load, other workers' servers: 1 % was not enough), so no margin is asserted; the rates are
    # checked exactly against the sampler's own file in test_the_network_mart_matches_the_raw_file.
    assert min(proc_rx, proc_tx, rx, tx) >= LO_BYTES


def test_disk_writes_match_proc_diskstats(recorded):
    got = _rated(recorded, "disk = $d", {"d": recorded["device"]})
    first, last = recorded["proc"]
    proc_written = (last["sectors"] - first["sectors"]) * 512
    written = (got.disk_write_bytes_per_s * got.seconds).sum()
    print(f"disk bytes written: procfs {written:.0f}, /proc {proc_written}")
    assert proc_written >= DISK_BYTES
    assert written == pytest.approx(proc_written, rel=0.02)
    assert got.disk_util_pct.between(0, 100).all() and (got.disk_transfers_per_s >= 0).all()


def test_process_cpu_threads_and_rss_match_proc(recorded):
    got = _rated(recorded, "pid = $pid", {"pid": recorded["pid"]})
    first, last = recorded["proc"]
    proc_cpu_s = (last["ticks"] - first["ticks"]) / os.sysconf("SC_CLK_TCK")
    cpu_s = (got.cpu_pct * got.seconds).sum() / 100
    print(f"CPU s: procfs {cpu_s:.2f}, /proc {proc_cpu_s:.2f}")
    assert proc_cpu_s >= 0.45  # the child's burn, all of it between the first and the last sample
    assert cpu_s == pytest.approx(proc_cpu_s, abs=0.03 * len(got))  # a 10 ms tick may land either side
    assert got.threads.iloc[-1] == int(last["status"]["Threads"]) == 6
    assert got.rss_kb.iloc[-1] == pytest.approx(int(last["status"]["VmRSS"].split()[0]), rel=0.02)
    assert set(got.command) == {Path(f"/proc/{os.getpid()}/comm").read_text().strip()} and got.cpu_count.iloc[0] == os.cpu_count()


def test_network_bytes_agree_with_sar_over_the_same_seconds(recorded):
    """sar -n DEV ran beside the sampler, both started before the test's traffic and stopped after it: lo's bytes
    agree. Loosely: sar gives rates over intervals it measured and prints only their end to the second, so
    counting each as 1 s loses what a loaded machine stretches them by (4.7 % seen at load 20 on 2 CPUs,
    while procfs matched /proc to 14 bytes in 269 MB), and other traffic at the ends differs."""
    if recorded["sar"] is None:
        pytest.skip("sysstat is not installed (make monitor-deps)")
    nets, _ = independent_sar(recorded["sar"])
    lo = nets[nets.IFACE == "lo"]
    got = _rated(recorded, "interface = 'lo'")
    sar_bytes = lo["rxkB/s"].iloc[1:].sum() * 1024  # its first interval ended before the procfs sampler started
    procfs_bytes = (got.rx_bytes_per_s * got.seconds).sum()
    print(f"lo bytes over the same seconds: sar {sar_bytes:.0f}, procfs {procfs_bytes:.0f}")
    assert procfs_bytes == pytest.approx(sar_bytes, rel=0.1)


def _raw_lo(text: str) -> pd.DataFrame:
    """lo's received-bytes counter at each sample, by plain python over the file."""
    rows, at = [], None
    for line in text.splitlines():
        if line.startswith("## at "):
            at = pd.Timestamp(line.split()[2])
        elif line.strip().startswith("lo:"):
            rows.append({"sampled_at": at, "rx": int(line.split(":")[1].split()[0])})
    return pd.DataFrame(rows)


def test_the_network_mart_matches_the_raw_file(recorded):
    raw = _raw_lo(recorded["text"])
    raw["rate"] = raw.rx.diff() / raw.sampled_at.diff().dt.total_seconds()
    got = _query(recorded, "select * from host_network_stats where interface = 'lo' order by iteration nulls first")
    assert got.samples[0] == len(raw) - 1
    for _, row in got.iterrows():
        mine = raw if pd.isna(row.iteration) else raw[
            (raw.sampled_at >= recorded["iterations"][int(row.iteration) - 1][1]) & (raw.sampled_at < recorded["iterations"][int(row.iteration) - 1][2])]
        assert mine.rate.notna().any() and row.rx_bytes_per_s == pytest.approx(mine.rate.mean()), row.iteration
        assert row.rx_gbps == pytest.approx(mine.rate.mean() * 8 / 1e9)
    findings = _query(recorded, "select * from health_findings where rule = 'disk_busy'")
    assert len(findings) >= 1  # procfs disks are judged as sar's are


HEADER = "## procfs clk_tck=100 page_size=4096 cpus=2 mem_total_kb=1000000\n"
NET = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n"


def _sample(at: str, lo_rx: int, pid_block: str = "") -> str:
    return (f"## at {at}\n## net/dev\n{NET}    lo: {lo_rx} 10 0 0 0 0 0 0 {lo_rx} 10 0 0 0 0 0 0\n"
            f"## diskstats\n 253 0 vda 10 0 {lo_rx} 5 20 0 40 6 0 0 9 11 0 0 0 0 0\n{pid_block}")


def _pid(pid: int, start: int, ticks: int, threads: int) -> str:
    rest = " ".join(str(v) for v in [1, 1, 1, 0, -1, 0, 7, 0, 1, 0, ticks, ticks, 0, 0, 20, 0, threads, 0, start, 4096000, 100])
    return f"## pid {pid}\n{pid} (my app) S {rest}\nThreads:\t{threads}\nVmRSS:\t 400 kB\n"


def _ingest(tmp_path, text: str):
    root = write_bundle(tmp_path / "bundle", {"h/procfs.log": text},
                        [{"kind": "procfs", "host": "h", "path": "h/procfs.log", "max_rejected_pct": 100}],
                        [{"index": 1, "start": "2026-12-03T00:00:00Z", "end": "2026-12-04T00:00:00Z"}])
    report = ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        rejected = con.execute("select line_no, reason from rejected_lines order by line_no").df()
        samples = con.execute("select * from host_samples where kind = 'procfs' order by line_no").df()
        processes = con.execute("select * from process_stats where iteration is null order by pid").df()
    return report.sources[0], rejected, samples, processes


def test_counters_that_go_back_and_a_restarted_process_give_no_negative_rate(tmp_path):
    text = (HEADER + _sample("2026-12-03T10:00:00Z", 1000, _pid(42, 500, 300, 4))
            + _sample("2026-12-03T10:00:02Z", 3000, _pid(42, 500, 400, 5))
            # lo re-created (counters back to 400); pid 42 reused by a new process (start 900, 10 ticks)
            + _sample("2026-12-03T10:00:04Z", 400, _pid(42, 900, 10, 2))
            + _sample("2026-12-03T10:00:06Z", 800, _pid(42, 900, 60, 2)))
    source, _, samples, processes = _ingest(tmp_path, text)
    assert source.rejected == 0
    lo = samples[samples.interface == "lo"]
    assert lo.rx_bytes_per_s.tolist()[1:] == [1000.0, 200.0, 200.0]  # 2000/2 s, then 400 counted from 0, 400/2 s
    cpu = samples[samples.pid == 42].cpu_pct.tolist()
    assert pd.isna(cpu[0]) and cpu[1] == 100.0 and pd.isna(cpu[2]) and cpu[3] == 50.0  # (100+100)/100/2 s
    assert (samples.filter(like="_per_s").fillna(0) >= 0).all().all()
    assert processes.threads_first.tolist() == [4] and processes.threads_last.tolist() == [2]


def test_a_cut_block_and_garbage_are_rejected_with_their_line_numbers(tmp_path):
    text = (HEADER + _sample("2026-12-03T10:00:00Z", 1000) + "garbage that is no /proc line\n"
            + _sample("2026-12-03T10:00:01Z", 2000, _pid(7, 1, 50, 3)) + "## at yesterday\n## net/dev\n"
            + "## at 2026-12-03T10:00:02Z\n## net/dev\n" + NET + "    lo: 3000 10 0 0")
    source, rejected, samples, _ = _ingest(tmp_path, text)
    lines = text.splitlines()
    bad_time = lines.index("## at yesterday") + 1
    assert source.rejected == 4 and rejected.line_no.tolist() == [
        lines.index("garbage that is no /proc line") + 1, bad_time, bad_time + 1, len(lines)]
    reasons = rejected.reason.tolist()
    assert "diskstats: expected at least 14 fields" in reasons[0] and "ISO-8601" in reasons[1]
    assert "no good `## at <time>`" in reasons[2] and "16 counters" in reasons[3]
    assert samples[samples.interface == "lo"].rx_bytes_per_s.tolist()[1:] == [1000.0]
    assert samples[samples.pid == 7].threads.tolist() == [3]


SAME_NAME = """
import sys, threading, time
for _ in range(int(sys.argv[1])): threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
print("ready", flush=True)
sys.stdin.read()
"""


def test_processes_watched_by_name_are_kept_apart_by_pid(tmp_path):
    """Two processes of one name (two JVMs, or a service and a test runner): pidstat and procfs, watched by that
    name as the monitors run them, give each its own process_stats row with its own threads, never a sum."""
    from tasks.stage.config import Monitor
    from tasks.stage.monitors import sampler_command

    (tmp_path / "pcsame").symlink_to(sys.executable)  # the command name is the name it was started by
    children = [subprocess.Popen([str(tmp_path / "pcsame"), "-c", SAME_NAME, str(extra)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True) for extra in (2, 7)]
    samplers = {}
    try:
        assert [child.stdout.readline().strip() for child in children] == ["ready", "ready"]
        for kind in ("pidstat", "procfs"):
            command = sampler_command(Monitor(kind=kind, processes=["pcsame"], interval_s=1))
            with open(tmp_path / f"{kind}.log", "w") as out:
                samplers[kind] = subprocess.Popen(["sh", "-c", command], stdout=out, stderr=subprocess.STDOUT,
                                                  start_new_session=True)
        time.sleep(2.5)
    finally:
        for sampler in samplers.values():
            os.killpg(sampler.pid, 15)
            sampler.wait(10)
        for child in children:
            child.stdin.close()
            child.wait(10)
    # one host per tool (a host of its own for each): both would otherwise give rows of the same host and pid
    sources = [{"kind": kind, "host": kind, "path": f"{kind}/{kind}.log", "max_rejected_pct": 50} for kind in samplers]
    root = write_bundle(tmp_path / "bundle", {f"{kind}/{kind}.log": tmp_path / f"{kind}.log" for kind in samplers},
                        sources, [{"index": 1, "start": "2020-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z"}])
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        got = con.execute("select host, command, pid, threads_max, threads_last from process_stats "
                          "where iteration = 1 order by host, pid").fetchall()
    expected = sorted((child.pid, threads) for child, threads in zip(children, (3, 8)))  # main thread + the extra ones
    assert got == [(kind, "pcsame", pid, threads, threads) for kind in sorted(samplers) for pid, threads in expected]
