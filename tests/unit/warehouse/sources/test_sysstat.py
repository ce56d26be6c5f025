"""sar and pidstat: the real tools run here for a few seconds against known traffic, disk writes and a process.

Their figures, as the warehouse holds them, are checked against /proc readings taken at the same time
(/proc/net/dev, /proc/diskstats, /proc/PID/stat and status); the marts against pandas over the raw files.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from tasks.warehouse import models
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.independent import independent_sar

QUIET = {"progress": lambda message: None}
ENV = {**os.environ, "TZ": "UTC", "LC_ALL": "C", "S_TIME_FORMAT": "ISO"}
LO_BYTES = 512 * 1024 * 1024
DISK_BYTES = 64 * 1024 * 1024
# A child that burns one CPU with 5 extra threads (4 sleepers, one waiting on stdin) and ~64 MB resident, until stdin closes.
# The watched process: 6 threads (main, 4 sleepers, the stdin listener), 64 MB resident, idle but for half a
# CPU second burned on each "burn" line (`burn_between_samples`), so /proc read a little after a sample shows
# the same ticks as the sampler read at it. At the end of stdin it exits.
CHILD = """
import os, sys, threading, time
block = bytearray(64 * 1024 * 1024)
for i in range(0, len(block), 4096): block[i] = 1
for _ in range(4): threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
burn = threading.Event()
def listen():
    for line in sys.stdin: burn.set()
    os._exit(0)
threading.Thread(target=listen, daemon=True).start()
print("ready", flush=True)
while True:
    burn.wait(); burn.clear()
    end = time.thread_time() + 0.5
    while time.thread_time() < end: pass
    print("burnt", flush=True)
"""

pytestmark = pytest.mark.skipif(not shutil.which("sar") or not shutil.which("pidstat"),
                                reason="sysstat is not installed (make monitor-deps)")


def _lo_counters() -> tuple[int, int]:
    """lo's bytes received and sent."""
    for line in Path("/proc/net/dev").read_text().splitlines():
        name, _, fields = line.partition(":")
        if name.strip() == "lo":
            values = fields.split()
            return int(values[0]), int(values[8])
    raise AssertionError("no lo in /proc/net/dev")


def _disk_device(path: Path) -> str:
    """The whole disk a path lives on, as /proc/diskstats names it (vda for a file on /dev/vda1)."""
    major, minor = os.major(os.stat(path).st_dev), os.minor(os.stat(path).st_dev)
    real = Path(f"/sys/dev/block/{major}:{minor}").resolve()
    return real.parent.name if (real / "partition").exists() else real.name


def _sectors_written(device: str) -> int:
    for line in Path("/proc/diskstats").read_text().splitlines():
        fields = line.split()
        if fields[2] == device:
            return int(fields[9])
    raise AssertionError(f"{device} not in /proc/diskstats")


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)


def _status(pid: int) -> dict[str, str]:
    return dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())


@contextmanager
def burning(child: subprocess.Popen):
    """The child burns its half CPU second while the block runs; it has finished when the block ends. Started
    after the samplers' second sample (the first was read whole), so the first readings hold none of it."""
    child.stdin.write("burn\n")
    child.stdin.flush()
    yield
    assert child.stdout.readline().strip() == "burnt"


def _send_over_lo(total: int) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    received = []

    def drain():
        connection, _ = server.accept()
        with connection:
            received.append(sum(iter(lambda: len(connection.recv(1 << 20)), 0)))

    reader = threading.Thread(target=drain)
    reader.start()
    with socket.create_connection(server.getsockname()) as client:
        chunk = b"x" * (1 << 20)
        for _ in range(total // len(chunk)):
            client.sendall(chunk)
    reader.join(30)
    server.close()
    assert received == [total]


class Watched:
    """A sampler whose output is read line by line; /proc is read the moment each sample's first line comes.

    sar and pidstat print a sample right at the end of its interval, so the /proc readings taken then bound the
    intervals of the samples after the first (exactly on a quiet machine).
    """

    def __init__(self, command: list[str], snapshot):
        # ahead of the busy machine (where allowed): a late reading stretches an interval that sar, dividing by
        # its measured length, still reports as a rate, while the test counts each sample as 1 s
        self.process = subprocess.Popen(["nice", "-n", "-15", *command], stdout=subprocess.PIPE, text=True, env=ENV,
                                        stderr=subprocess.DEVNULL)
        self.lines: list[str] = []
        self.at_sample: dict[str, dict] = {}  # time of day of a sample -> /proc when its first line came
        self._snapshot = snapshot
        self._reader = threading.Thread(target=self._read)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            tokens = line.split()
            if tokens and tokens[0][:2].isdigit() and not {"IFACE", "DEV"} & set(tokens):
                self.at_sample.setdefault(tokens[0], self._snapshot())
            self.lines.append(line)

    def wait_for_samples(self, count: int) -> None:
        deadline = time.monotonic() + 30
        while len(self.at_sample) < count:
            assert time.monotonic() < deadline, f"{self.process.args[0]} printed no sample"
            time.sleep(0.02)

    def stop(self) -> tuple[str, list[dict]]:
        """Its text, and /proc at each of its samples."""
        self.process.send_signal(2)  # SIGINT: sar and pidstat print their averages and exit
        self.process.wait(10)
        self._reader.join(10)
        return "".join(self.lines), list(self.at_sample.values())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """sar and pidstat while 512 MB cross lo and 64 MB are written to disk, with /proc read at their samples."""
    folder = tmp_path_factory.mktemp("sysstat")
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    data = os.urandom(DISK_BYTES)
    try:
        assert child.stdout.readline().strip() == "ready"
        device = _disk_device(folder)
        snapshot = lambda: {"lo": _lo_counters(), "sectors": _sectors_written(device),  # noqa: E731
                            "ticks": _cpu_ticks(child.pid), "status": _status(child.pid)}
        sar = Watched(["sar", "-n", "DEV", "-d", "1"], snapshot)
        pidstat = Watched(["pidstat", "-h", "-u", "-r", "-v", "-p", str(child.pid), "1"], snapshot)
        for watched in (sar, pidstat):
            watched.wait_for_samples(2)
        with burning(child):
            _send_over_lo(LO_BYTES)
            with open(folder / "written.bin", "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        # the interval the work ended in, and at least three sample times: the sampling-gap check judges a
        # series from its third sample on (a fast machine did the work within one interval)
        for watched in (sar, pidstat):
            watched.wait_for_samples(max(len(watched.at_sample) + 1, 3))
        (sar_text, sar_proc), (pidstat_text, pidstat_proc) = sar.stop(), pidstat.stop()
    finally:
        child.stdin.close()
        child.wait(10)
    (folder / "written.bin").unlink()
    return {"folder": folder, "sar": sar_text, "pidstat": pidstat_text, "device": device, "pid": child.pid,
            "sar_proc": sar_proc, "pidstat_proc": pidstat_proc,
            "sar_times": list(sar.at_sample), "pidstat_times": list(pidstat.at_sample)}


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _day(text: str) -> str:
    return text.splitlines()[0].split()[3]


@pytest.fixture(scope="module")
def warehouse(recorded):
    """The two files ingested as one bundle, cut into two iterations in the middle of the recording."""
    times = [pd.Timestamp(f"{_day(recorded['sar'])} {tod}", tz="UTC") for tod in recorded["sar_times"]]
    start, end = times[0] - pd.Timedelta(seconds=2), times[-1] + pd.Timedelta(seconds=2)
    middle = times[len(times) // 2] - pd.Timedelta(milliseconds=500)
    root = write_bundle(
        recorded["folder"] / "bundle",
        {"h/sar.log": recorded["sar"], "h/pidstat.log": recorded["pidstat"]},
        [{"kind": "sar", "host": "h", "path": "h/sar.log", "timezone": "UTC"},
         {"kind": "pidstat", "host": "h", "path": "h/pidstat.log", "timezone": "UTC"}],
        [{"index": 1, "start": _iso(start), "end": _iso(middle)}, {"index": 2, "start": _iso(middle), "end": _iso(end)}],
    )
    path = recorded["folder"] / "w.duckdb"
    build = models.materialize

    def counted(con, model, params, tables=None):  # (rows, distinct keys) of the models this change adds, as test_models does
        build(con, model, params, tables)
        if model.name in SYSSTAT_MODELS:
            key = ", ".join(model.header.grain)
            GRAINS[model.name] = con.execute(f"select (select count(*) from {model.name}), "
                                             f"(select count(*) from (select distinct {key} from {model.name}))").fetchone()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(models, "materialize", counted)
        report = ingest_bundle(root, path, **QUIET)
    assert [(s.rejected, s.rows > 0) for s in report.sources] == [(0, True), (0, True)]
    return path, [(1, start, middle), (2, middle, end)]


SYSSTAT_MODELS = ("stg_sar__samples", "stg_pidstat__samples", "host_network_stats", "host_disk_stats", "process_stats",
                  "int_health_findings__sysstat")
GRAINS: dict[str, tuple[int, int]] = {}


def test_the_sysstat_models_grains_are_keys_on_real_output(warehouse):
    assert set(GRAINS) == set(SYSSTAT_MODELS)
    for name, (rows, keys) in GRAINS.items():
        assert rows == keys > 0, name


def _query(path: Path, sql: str, params=None) -> pd.DataFrame:
    with duckdb.connect(str(path), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


def _after(recorded, kind: str, condition: str, params=None, skip: int = 1) -> pd.DataFrame:
    """This kind's samples after its first `skip`, as the warehouse holds them (1 s each: an amount is the sum of
    the rates; sar keeps its intervals on a timer, and our own clock readings jitter more on a busy machine)."""
    first = pd.Timestamp(f"{_day(recorded[kind])} {recorded[kind + '_times'][skip - 1]}", tz="UTC")
    got = _query(recorded["folder"] / "w.duckdb",
                 f"select * from host_samples where kind = $kind and {condition} and sampled_at > $first "
                 "order by sampled_at", {"kind": kind, "first": first.to_pydatetime(), **(params or {})})
    assert len(got) == len(recorded[kind + "_times"]) - skip, got
    got["seconds"] = 1.0
    return got


# Each sample is counted as 1 s; sar divides by the length it measured, which a loaded machine (load 16 on 2 cores
# seen) stretches by up to ~2 % now and then. On a quiet machine sar and /proc agree to the byte, which is how sar's
# kB was found to be 1024 bytes (test_bad_sar_lines_... pins the conversion itself).
STRETCH = 0.03


def _bracket(recorded, amount) -> tuple[int, int]:
    """What /proc counted (inner, outer) around sar's samples after its second, whose intervals span the test's
    work. Each reading comes a moment after its sample (later on a busy machine, where other processes write and
    send meanwhile): the readings at the second and the next-to-last samples fall inside those intervals, the ones
    at the first and the last samples outside; sar's own count lies between."""
    at = recorded["sar_proc"]
    return amount(at[-2]) - amount(at[1]), amount(at[-1]) - amount(at[0])


def _between(figure: float, bracket: tuple[int, int]) -> bool:
    inner, outer = bracket
    return inner * (1 - STRETCH) <= figure <= outer * (1 + STRETCH)


def test_sar_network_bytes_match_proc_net_dev(recorded, warehouse):
    got = _after(recorded, "sar", "interface = 'lo'", skip=2)
    rx, tx = ((got[column] * got.seconds).sum() for column in ("rx_bytes_per_s", "tx_bytes_per_s"))
    received, sent = (_bracket(recorded, lambda at, i=i: at["lo"][i]) for i in (0, 1))
    print(f"lo bytes: sar {rx:.0f}, /proc {received}")
    assert rx >= LO_BYTES * (1 - STRETCH) and tx >= LO_BYTES * (1 - STRETCH)  # the test's own traffic, all inside
    assert _between(rx, received) and _between(tx, sent)


def test_sar_disk_writes_match_proc_diskstats(recorded, warehouse):
    got = _after(recorded, "sar", "disk = $d", {"d": recorded["device"]}, skip=2)
    written = (got.disk_write_bytes_per_s * got.seconds).sum()
    bracket = _bracket(recorded, lambda at: at["sectors"] * 512)
    print(f"disk bytes written: sar {written:.0f}, /proc {bracket}")
    assert written >= DISK_BYTES * (1 - STRETCH)
    assert _between(written, bracket)


def test_pidstat_cpu_threads_and_rss_match_proc(recorded, warehouse):
    got = _after(recorded, "pidstat", "true")
    first, *_, last = recorded["pidstat_proc"]
    assert set(got.pid) == {recorded["pid"]}
    proc_cpu_s = (last["ticks"] - first["ticks"]) / os.sysconf("SC_CLK_TCK")
    cpu_s = (got.cpu_pct * got.seconds).sum() / 100
    print(f"CPU s: pidstat {cpu_s:.2f}, /proc {proc_cpu_s:.2f}")
    assert proc_cpu_s >= 0.45  # the child's burn, all of it between the first and the last sample
    assert cpu_s == pytest.approx(proc_cpu_s, abs=0.03 * len(got))  # /proc counts in 10 ms ticks
    assert got.threads.iloc[-1] == int(last["status"]["Threads"]) == 6  # main, 4 sleepers, the stdin watcher
    assert got.rss_kb.iloc[-1] == pytest.approx(int(last["status"]["VmRSS"].split()[0]), rel=0.01)
    assert got.cpu_count.iloc[0] == os.cpu_count()


def _iteration(frame: pd.DataFrame, windows) -> pd.Series:
    result = pd.Series(np.nan, index=frame.index)
    for index, start, end in windows:
        result[(frame.sampled_at >= pd.Timestamp(start)) & (frame.sampled_at < pd.Timestamp(end))] = index
    return result


def test_network_and_disk_marts_match_the_raw_file(recorded, warehouse):
    path, windows = warehouse
    nets, disks = independent_sar(recorded["sar"])
    nets["iteration"], disks["iteration"] = _iteration(nets, windows), _iteration(disks, windows)
    got = _query(path, "select * from host_network_stats where iteration is not null order by interface, iteration")
    expected = nets.groupby(["IFACE", "iteration"]).agg(rx=("rxkB/s", "mean"), tx=("txkB/s", "mean"),
                                                        n=("rxkB/s", "size")).reset_index()
    assert list(zip(got.interface, got.iteration, got.samples)) == list(
        zip(expected.IFACE, expected.iteration.astype(int), expected.n))
    assert np.allclose(got.rx_bytes_per_s, expected.rx * 1024) and np.allclose(got.tx_gbps, expected.tx * 1024 * 8 / 1e9)
    whole = _query(path, "select rx_gbps_max from host_network_stats where interface = 'lo' and iteration is null")
    assert whole.rx_gbps_max[0] == pytest.approx(nets[nets.IFACE == "lo"]["rxkB/s"].max() * 1024 * 8 / 1e9)

    got = _query(path, "select * from host_disk_stats where iteration is not null order by disk, iteration")
    for _, row in got.iterrows():
        mine = disks[(disks.DEV == row.disk) & (disks.iteration == row.iteration)]
        assert row.samples == len(mine)
        assert row.util_pct_avg == pytest.approx(mine["%util"].mean())
        assert row.write_bytes_per_s == pytest.approx(mine["wkB/s"].mean() * 1024)
        weighted = (mine["await"] * mine["tps"]).sum() / mine["tps"].sum() if mine["tps"].sum() else None
        assert row.await_ms_avg == pytest.approx(weighted) if weighted is not None else pd.isna(row.await_ms_avg)


def test_process_mart_matches_the_raw_file(recorded, warehouse):
    path, windows = warehouse
    lines = recorded["pidstat"].splitlines()
    names = next(line.split()[2:] for line in lines if line.startswith("# Time"))
    rows = [dict(zip(names, line.split()[1:])) | {"time": line.split()[0]}
            for line in lines if line[:2].isdigit()]
    frame = pd.DataFrame(rows)
    frame["sampled_at"] = pd.to_datetime(lines[0].split()[3] + " " + frame["time"]).dt.tz_localize("UTC")
    frame["iteration"] = _iteration(frame, windows)
    got = _query(path, "select * from process_stats order by iteration nulls first")
    assert set(got.command) == set(frame.Command) and len(set(frame.Command)) == 1
    for _, row in got.iterrows():
        mine = frame if pd.isna(row.iteration) else frame[frame.iteration == row.iteration]
        assert row.samples == len(mine)
        assert row.cpu_pct_avg == pytest.approx(mine["%CPU"].astype(float).mean())
        assert row.cpu_share_pct_avg == pytest.approx(mine["%CPU"].astype(float).mean() / os.cpu_count())
        assert (row.threads_first, row.threads_last) == (int(mine.threads.iloc[0]), int(mine.threads.iloc[-1]))
        assert row.rss_max_kb == mine.RSS.astype(float).max()


SAR_TEXT = """Linux 6.1.0 (box) \t2026-12-03 \t_x86_64_\t(4 CPU)

23:59:58        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil
23:59:59         eth0    100.00    200.00   1000.00   2000.00      0.00      0.00      0.00      0.16
23:59:59         eth0    1oo.00    200.00   1000.00   2000.00      0.00      0.00      0.00      0.16
23:59:59         eth0    100.00    200.00   1000.00
garbage that is no sar line

23:59:59        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil
00:00:00         eth0    300.00    400.00   3000.00   4000.00      0.00      0.00      0.00      0.48

23:59:59          CPU     %user     %nice   %system   %iowait    %steal     %idle
00:00:00          all      1.00      0.00      1.00      0.00      0.00     98.00

Average:        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil
Average:         eth0    200.00    300.00   2000.00   3000.00      0.00      0.00      0.00      0.32
"""


def _ingest_text(tmp_path, kind: str, text: str, **options):
    root = write_bundle(tmp_path / "bundle", {f"h/{kind}.log": text},
                        [{"kind": kind, "host": "h", "path": f"h/{kind}.log", "max_rejected_pct": 100, **options}],
                        [{"index": 1, "start": "2026-12-03T00:00:00Z", "end": "2026-12-05T00:00:00Z"}])
    return ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_bad_sar_lines_are_rejected_with_their_line_numbers_and_midnight_moves_the_date(tmp_path):
    report = _ingest_text(tmp_path, "sar", SAR_TEXT, timezone="Europe/Berlin")
    (source,) = report.sources
    assert (source.rows, source.rejected) == (2, 3)
    assert "1 under CPU" in " ".join(source.notes)
    rejected = _query(tmp_path / "w.duckdb", "select line_no, reason from rejected_lines order by line_no")
    assert rejected.line_no.tolist() == [5, 6, 7]
    assert "not a number" in rejected.reason[0] and "expected 9 values" in rejected.reason[1]
    assert "starts with a time" in rejected.reason[2]
    got = _query(tmp_path / "w.duckdb", "select sampled_at, rx_bytes_per_s, tx_packets_per_s from host_samples order by 1")
    # Berlin wall-clock times (+01:00 in December); the second sample is after midnight, on the next day
    assert got.sampled_at.tolist() == [pd.Timestamp("2026-12-03T22:59:59Z"), pd.Timestamp("2026-12-03T23:00:00Z")]
    assert got.rx_bytes_per_s.tolist() == [1000 * 1024, 3000 * 1024] and got.tx_packets_per_s.tolist() == [200, 400]


@pytest.mark.parametrize("text, reason", [
    ("12:00:01        IFACE   rxpck/s\n12:00:02 lo 1.00\n", "before the first line that gives the date"),
    ("Linux 6.1.0 (box) _x86_64_ (2 CPU)\n12:00:02 lo 1.00\n", "first line without a date"),
    ("Linux 6.1.0 (box) \t2026-12-03 \t_x86_64_\t(2 CPU)\n12:00:02 lo 1.00\n", "before any header line"),
], ids=["no-first-line", "first-line-without-date", "no-header"])
def test_sar_text_without_date_or_header_is_rejected(text, reason, tmp_path):
    report = _ingest_text(tmp_path, "sar", text)
    assert report.sources[0].rows == 0 and report.sources[0].rejected >= 1
    reasons = _query(tmp_path / "w.duckdb", "select reason from rejected_lines").reason.tolist()
    assert any(reason in r for r in reasons), reasons


PIDSTAT_T = """Linux 6.1.0 (box) \t12/03/26 \t_x86_64_\t(2 CPU)

# Time        UID      TGID       TID    %usr %system  %guest   %wait    %CPU   CPU  minflt/s  majflt/s     VSZ     RSS   %MEM  Command
01:00:01 PM  1000      4242         -   50.00   10.00    0.00    0.00   60.00     1      0.00      0.00  900000  200000   2.00  java
01:00:01 PM  1000         -      4242   40.00    5.00    0.00    0.00   45.00     1      0.00      0.00  900000  200000   2.00  |__java
01:00:01 PM  1000         -      4243   10.00    5.00    0.00    0.00   15.00     0      0.00      0.00  900000  200000   2.00  |__C2 CompilerThre
01:00:02 PM  1000      4242         -   70.00   10.00    0.00    0.00   80.00     1      0.00      0.00  900000  210000   2.10  java
01:00:02 PM  1000         -      4242   40.00    5.00    0.00    0.00   45.00     1      0.00      0.00  900000  210000   2.10  |__java
01:00:02 PM  1000         -      4243   10.00    5.00    0.00    0.00   15.00     0      0.00      0.00  900000  210000   2.10  |__C2 CompilerThre
01:00:02 PM  1000         -      4250   20.00    0.00    0.00    0.00   20.00     0      0.00      0.00  900000  210000   2.10  |__pool-1
01:00:03 PM  1000      abc         -   70.00   10.00    0.00    0.00   80.00     1      0.00      0.00  900000  210000   2.10  java
"""


def test_pidstat_t_threads_are_counted_from_thread_lines_in_a_12_hour_locale(tmp_path):
    report = _ingest_text(tmp_path, "pidstat", PIDSTAT_T)
    assert (report.sources[0].rows, report.sources[0].rejected) == (7, 1)
    got = _query(tmp_path / "w.duckdb", "select * from process_stats order by iteration nulls first")
    assert got[["command", "pid", "samples", "cpu_count"]].values.tolist() == [["java", 4242, 2, 2]] * 2
    assert got.cpu_pct_avg.tolist() == [70.0, 70.0] and got.cpu_share_pct_avg.tolist() == [35.0, 35.0]
    assert (got.threads_first[0], got.threads_last[0], got.threads_max[0]) == (2, 3, 3)
    assert got.rss_last_kb[0] == 210000 and got.first_sampled_at[0] == pd.Timestamp("2026-12-03T13:00:01Z")
    threads = _query(tmp_path / "w.duckdb", "select command, tid from host_samples where tid is not null order by line_no")
    assert threads.command.tolist()[1] == "C2 CompilerThre" and threads.tid.tolist() == [4242, 4243, 4242, 4243, 4250]


def test_the_sampling_gap_check_sees_sample_times_not_rows(recorded, warehouse):
    """sar writes a row per interface and disk at each time: the no_gaps check compares the times (python
    over the recorded times), or the zero gaps between rows of one time would make the interval 0."""
    from tasks.validate.run import fetch_check

    path, _ = warehouse
    times = sorted({pd.Timestamp(f"{_day(recorded['sar'])} {tod}", tz="UTC") for tod in recorded["sar_times"]})
    gaps = [(later - earlier).total_seconds() for earlier, later in zip(times, times[1:])]
    with duckdb.connect(str(path), read_only=True) as con:
        (run_id,) = con.execute("select run_id from runs").fetchone()
        rows = fetch_check(con, "chk_sample_intervals", {"run_id": run_id})
    sar = rows[rows["kind"] == "sar"].sort_values("sampled_at")
    assert sar["gap_s"].tolist() == gaps
    assert set(sar["interval_s"]) == {float(np.median(gaps))} and np.median(gaps) > 0
