"""vmstat: real `vmstat` output recorded here, the echo sample bundle, and edge cases, against pandas parses."""

from __future__ import annotations

import math
import os
import subprocess
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from tasks.warehouse.ingest import IngestError, ingest_bundle
from tasks.warehouse.sources.base import SourceError
from tests.bundles import write_bundle

QUIET = {"progress": lambda message: None}
CPU = {"us": "cpu_user_pct", "sy": "cpu_system_pct", "id": "cpu_idle_pct", "wa": "cpu_wait_pct", "st": "cpu_steal_pct"}


def _query(warehouse, sql, params=None) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


def independent_vmstat(text: str, zone: str | None = None) -> pd.DataFrame:
    """Data rows by the second header line's names (pandas), with `-t` times read in the IANA `zone`."""
    lines = text.splitlines()
    names = lines[1].split()
    stamped = "timestamp" in lines[0]
    if stamped:
        names = names[:-1] + ["date", "time"]
    rows = [line.split() for line in lines if line.split() and line.split()[0].isdigit()]
    frame = pd.DataFrame(rows, columns=names)
    for name in names:
        if name not in ("date", "time"):
            frame[name] = frame[name].astype(float)
    if stamped:
        local = pd.to_datetime(frame["date"] + " " + frame["time"])
        frame["sampled_at"] = local.dt.tz_localize(zone).dt.tz_convert("UTC")
    frame["k"] = np.arange(len(frame))
    return frame


def iteration_of(times: pd.Series, iterations: list[dict]) -> pd.Series:
    """start <= t < end, NaN outside every iteration."""
    result = pd.Series(np.nan, index=times.index)
    for it in iterations:
        inside = (times >= pd.Timestamp(it["start"])) & (times < pd.Timestamp(it["end"]))
        result[inside] = it["index"]
    return result


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.fixture(scope="module")
def real_vmstat(tmp_path_factory):
    """`vmstat 1 5` and `vmstat -t 1 5` (zone Europe/Berlin) run at once on this machine."""
    folder = tmp_path_factory.mktemp("vmstat")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    now = datetime.now(timezone.utc)
    started = now.replace(microsecond=now.microsecond // 1000 * 1000)  # the manifest keeps milliseconds
    plain = subprocess.Popen(["vmstat", "1", "5"], stdout=subprocess.PIPE, text=True, env=env)
    stamped = subprocess.Popen(["vmstat", "-t", "1", "5"], stdout=subprocess.PIPE, text=True,
                               env={**env, "TZ": "Europe/Berlin"})
    plain_text, _ = plain.communicate(timeout=30)
    stamped_text, _ = stamped.communicate(timeout=30)
    assert plain.returncode == 0 and stamped.returncode == 0
    return folder, started, plain_text, stamped_text


def test_real_vmstat_matches_an_independent_parse(real_vmstat, tmp_path):
    folder, started, plain_text, stamped_text = real_vmstat
    iterations = [
        {"index": 1, "start": _iso(started + timedelta(seconds=0.5)), "end": _iso(started + timedelta(seconds=2.5))},
        {"index": 2, "start": _iso(started + timedelta(seconds=2.5)), "end": _iso(started + timedelta(seconds=9))},
    ]
    root = write_bundle(
        tmp_path / "bundle",
        {"h/vmstat.log": plain_text, "h/vmstat-t.log": stamped_text},
        [
            {"kind": "vmstat", "host": "plain", "path": "h/vmstat.log", "started_at": _iso(started), "interval_s": 1},
            {"kind": "vmstat", "host": "stamped", "path": "h/vmstat-t.log", "role": "dependency"},
        ],
        iterations,
    )
    warehouse = tmp_path / "w.duckdb"
    report = ingest_bundle(root, warehouse, **QUIET)
    assert [(s.rows, s.rejected) for s in report.sources] == [(5, 0), (5, 0)]

    plain = independent_vmstat(plain_text)
    plain["sampled_at"] = pd.Timestamp(started) + pd.to_timedelta(plain["k"], unit="s")
    stamped = independent_vmstat(stamped_text, zone="Europe/Berlin")
    for host, expected in (("plain", plain), ("stamped", stamped)):
        expected["iteration"] = iteration_of(expected["sampled_at"], iterations)
        got = _query(warehouse, "select * from host_samples where host = $h order by line_no", {"h": host})
        assert got["sampled_at"].tolist() == expected["sampled_at"].tolist()
        assert got["is_since_boot"].tolist() == [True, False, False, False, False]
        assert got["iteration"].astype(float).fillna(-1).tolist() == expected["iteration"].fillna(-1).tolist()
        for column, name in CPU.items():
            assert got[name].tolist() == expected[column].tolist()
        assert got["mem_free_kb"].tolist() == expected["free"].tolist()
        assert got["context_switches_per_s"].tolist() == expected["cs"].tolist()

        stats = _query(warehouse, "select * from host_iteration_stats where host = $h order by iteration", {"h": host})
        assert stats["role"].tolist() == ["sut" if host == "plain" else "dependency"] * 2
        counted = expected[expected["k"] > 0].groupby("iteration")  # the since-boot row is left out
        assert stats["samples"].tolist() == [int(counted.size().get(i, 0)) for i in (1, 2)]
        for i, row in stats.set_index("iteration").iterrows():
            if row["samples"] == 0:
                assert pd.isna(row["cpu_idle_avg"])
                continue
            group = counted.get_group(float(i))
            assert row["cpu_user_avg"] == pytest.approx(group["us"].mean())
            assert row["cpu_idle_avg"] == pytest.approx(group["id"].mean())
            assert row["cpu_idle_min"] == group["id"].min()
            assert row["run_queue_max"] == group["r"].max()
            assert row["blocks_out_per_s"] == pytest.approx(group["bo"].mean())


@pytest.mark.parametrize("unit, kib", [("M", 1024.0), ("m", 1e6 / 1024), ("k", 1000 / 1024)])
def test_vmstat_S_units_are_converted_to_kib_from_the_unit_option(unit, kib, tmp_path):
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}
    text = subprocess.run(["vmstat", "-S", unit, "-a", "-w", "-t", "1", "2"], capture_output=True, text=True,
                          env=env, timeout=30, check=True).stdout
    expected = independent_vmstat(text, zone="UTC")
    root = write_bundle(
        tmp_path / "bundle",
        {"h/vmstat.log": text},
        [{"kind": "vmstat", "host": "h", "path": "h/vmstat.log", "unit": unit}],
        [{"index": 1, "start": "2020-01-01T00:00:00Z", "end": "2040-01-01T00:00:00Z"}],
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    got = _query(tmp_path / "w.duckdb",
                 "select mem_free_kb, mem_inactive_kb, mem_active_kb, swap_in_kb_per_s, blocks_out_per_s "
                 "from host_samples order by sampled_at")
    half_up = lambda value: math.floor(value + 0.5)  # noqa: E731 - SQL's round; Python's rounds half to even
    assert list(got.mem_free_kb) == [half_up(v * kib) for v in expected["free"]]
    assert list(got.mem_active_kb) == [half_up(v * kib) for v in expected["active"]]
    assert list(got.mem_inactive_kb) == [half_up(v * kib) for v in expected["inact"]]
    assert list(got.swap_in_kb_per_s) == [v * kib for v in expected["si"]]  # procps converts si/so too
    assert list(got.blocks_out_per_s) == list(expected["bo"])  # but never the block counts


def test_vmstat_S_M_swapping_is_converted_and_block_counts_are_not(tmp_path):
    # real `vmstat -S M -t 1` layout (procps-ng 4.0.2) on a swapping host: si/so are MiB/s, bi/bo blocks/s
    text = (
        "procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
        " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n"
        " 1  0    512  20814     46   2924    0    0  1465  3573  383  603 38  6 55  0  0 2026-12-02 14:27:02\n"
        " 3  2    700    120     46   2924    3   12   250  9000  900  990 20 10 40 30  0 2026-12-02 14:27:03\n"
    )
    root = write_bundle(
        tmp_path / "bundle",
        {"h/vmstat.log": text},
        [{"kind": "vmstat", "host": "h", "path": "h/vmstat.log", "unit": "M"}],
        [{"index": 1, "start": "2026-12-02T14:27:00Z", "end": "2026-12-02T14:28:00Z"}],
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    got = _query(tmp_path / "w.duckdb", "select swap_used_kb, swap_in_kb_per_s, swap_out_kb_per_s, blocks_out_per_s "
                                        "from host_samples order by sampled_at")
    assert got.values.tolist() == [[512 * 1024, 0, 0, 3573], [700 * 1024, 3 * 1024, 12 * 1024, 9000]]


def test_an_unknown_vmstat_unit_is_named(tmp_path, samples):
    root = write_bundle(
        tmp_path / "bundle",
        {"h/vmstat.log": (samples / "bundle-echo" / "app1" / "vmstat-t.log").read_text()},
        [{"kind": "vmstat", "host": "h", "path": "h/vmstat.log", "unit": "MB"}],
        [{"index": 1, "start": "2020-01-01T00:00:00Z", "end": "2040-01-01T00:00:00Z"}],
    )
    with pytest.raises(SourceError, match=r"sources\.0 \(h/vmstat.log\)\.unit: 'MB'"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    assert not (tmp_path / "w.duckdb").exists() or _query(tmp_path / "w.duckdb", "select count(*) n from runs").n[0] == 0


@pytest.mark.parametrize(
    "zone_name, first_local, first_utc",
    [("CET", "2026-03-29 01:59:57", "2026-03-29T00:59:57Z"),  # spring: 02:00 CET becomes 03:00 CEST
     ("CEST", "2026-10-25 02:59:57", "2026-10-25T00:59:57Z")],  # autumn: 03:00 CEST becomes 02:00 CET
    ids=["spring", "autumn"],
)
def test_vmstat_t_across_a_daylight_saving_switch_stays_one_sample_a_second(zone_name, first_local, first_utc,
                                                                            tmp_path):
    # `vmstat -n -t 1` prints the zone once, in its header; the rows are local wall-clock times
    start = datetime.fromisoformat(first_local)
    zone = ZoneInfo("Europe/Berlin")
    first = datetime.fromisoformat(first_utc.replace("Z", "+00:00"))
    walls = [(first + timedelta(seconds=k)).astimezone(zone).strftime("%Y-%m-%d %H:%M:%S") for k in range(8)]
    assert walls[0] == start.strftime("%Y-%m-%d %H:%M:%S") and len(set(walls)) == 8
    text = ("procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n"
            f" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st {zone_name:>19}\n"
            + "".join(f" 1  0      0 21913988  17792 2552752    0    0     0     0   56   83  0  1 99  0  0 {wall}\n"
                      for wall in walls))
    root = write_bundle(
        tmp_path / "bundle",
        {"h/vmstat.log": text},
        [{"kind": "vmstat", "host": "h", "path": "h/vmstat.log"}],
        [{"index": 1, "start": first.isoformat(), "end": (first + timedelta(seconds=8)).isoformat()}],
        timezone="Europe/Berlin",
    )
    ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
    got = _query(tmp_path / "w.duckdb", "select sampled_at, iteration from host_samples order by line_no")
    assert list(got.sampled_at) == [pd.Timestamp(first + timedelta(seconds=k)) for k in range(8)]
    assert got.iteration.eq(1).all()


def test_echo_bundle_places_plain_and_stamped_vmstat_in_the_same_iterations(samples, tmp_path):
    """app1/vmstat.log (no -t: started_at + k * 2 s) and app1/vmstat-t.log were written at once."""
    manifest = yaml.safe_load((samples / "bundle-echo" / "run.yaml").read_text())
    sources = [s for s in manifest["sources"] if s["kind"] == "vmstat"]
    root = write_bundle(tmp_path / "b", {s["path"]: samples / "bundle-echo" / s["path"] for s in sources},
                        sources, manifest["iterations"])
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, **QUIET)
    got = _query(warehouse, "select host, sampled_at, iteration, cpu_user_pct, cpu_idle_pct from host_samples "
                            "order by host, line_no")
    stamped = got[got["host"] == "app1"].reset_index(drop=True)
    plain = got[got["host"] == "app1-legacy"].reset_index(drop=True)

    expected_plain = independent_vmstat((samples / "bundle-echo/app1/vmstat.log").read_text())
    expected_stamped = independent_vmstat((samples / "bundle-echo/app1/vmstat-t.log").read_text(), zone="UTC")
    start = pd.Timestamp(sources[1]["started_at"])
    assert plain["sampled_at"].tolist() == (start + pd.to_timedelta(expected_plain["k"] * 2, unit="s")).tolist()
    assert stamped["sampled_at"].tolist() == expected_stamped["sampled_at"].tolist()
    assert len(plain) == len(stamped) == 28
    # the same k-th sample lands in the same iteration either way, and carries the same CPU figures
    assert plain["iteration"].fillna(-1).tolist() == stamped["iteration"].fillna(-1).tolist()
    assert (plain["sampled_at"] - stamped["sampled_at"]).abs().max() < pd.Timedelta(seconds=1)
    assert plain["cpu_user_pct"].tolist() == stamped["cpu_user_pct"].tolist()
    expected_iterations = iteration_of(expected_stamped["sampled_at"], manifest["iterations"])
    assert stamped["iteration"].fillna(-1).tolist() == expected_iterations.fillna(-1).tolist()
    assert stamped["iteration"].value_counts().to_dict() == {1: 5, 2: 5, 3: 5}

    stats = _query(warehouse, "select host, iteration, samples, cpu_idle_avg from host_iteration_stats "
                              "order by host, iteration")
    for host, frame in (("app1", expected_stamped), ("app1-legacy", expected_plain)):
        frame["iteration"] = expected_iterations
        mine = stats[stats["host"] == host].set_index("iteration")
        for i, group in frame[frame["k"] > 0].groupby("iteration"):
            assert mine.loc[i, "samples"] == len(group)
            assert mine.loc[i, "cpu_idle_avg"] == pytest.approx(group["id"].mean())


# procps-ng 4 `vmstat -w -t` with `gu`, the header repeated, a value overflowing its column, one broken line
WIDE = """\
--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu---------- -----timestamp-----
   r    b         swpd         free         buff        cache   si   so    bi    bo   in   cs  us  sy  id  wa  st  gu                CEST
   6    0            0     22865528        13360      1361380    0    0   553  3166  176  318  16   5  79   0   0   0 2026-07-01 12:00:00
  12    1            0     22865000        13360      1361380    0    0     0 123456789  4176 100318  90   5   0   5   0   0 2026-07-01 12:00:02
   1    0            0     22865000        13360      1361380    0    0     0     0  176  318  xx   5  95   0   0   0 2026-07-01 12:00:04
--procs-- -----------------------memory---------------------- ---swap-- -----io---- -system-- ----------cpu---------- -----timestamp-----
   r    b         swpd         free         buff        cache   si   so    bi    bo   in   cs  us  sy  id  wa  st  gu                CEST
   2    0            0     22864000        13360      1361380    0    0     0     0  176  318  10   5  85   0   0   0 2026-07-01 12:00:06
"""


def _wide_bundle(tmp_path, text=WIDE, **source):
    return write_bundle(
        tmp_path / "b", {"h/vmstat.log": text},
        [{"kind": "vmstat", "host": "h", "path": "h/vmstat.log", "max_rejected_pct": 50, **source}],
        [{"index": 1, "start": "2026-07-01T10:00:01Z", "end": "2026-07-01T10:00:05Z"}],
    )


def test_columns_by_name_repeated_header_overflow_zone_and_rejects(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    report = ingest_bundle(_wide_bundle(tmp_path), warehouse, **QUIET)
    assert (report.sources[0].rows, report.sources[0].rejected) == (3, 1)
    got = _query(warehouse, "select line_no, sampled_at, iteration, is_since_boot, run_queue, blocks_out_per_s, "
                            "cpu_idle_pct, cpu_guest_pct from host_samples order by line_no")
    assert got["line_no"].tolist() == [3, 4, 8]
    # CEST is UTC+2: 12:00:02 local is 10:00:02 UTC
    assert got["sampled_at"].dt.strftime("%H:%M:%S").tolist() == ["10:00:00", "10:00:02", "10:00:06"]
    assert got["iteration"].fillna(-1).tolist() == [-1, 1, -1]
    assert got["is_since_boot"].tolist() == [True, False, False]
    assert got["run_queue"].tolist() == [6, 12, 2]
    assert got["blocks_out_per_s"].tolist() == [3166, 123456789, 0]
    assert got["cpu_guest_pct"].tolist() == [0, 0, 0]
    rejected = _query(warehouse, "select line_no, reason from rejected_lines")
    assert rejected["line_no"].tolist() == [5]
    assert "us: not a number" in rejected["reason"][0]


def test_the_manifest_zone_names_an_ambiguous_abbreviation(tmp_path):
    text = WIDE.replace("CEST", " IST").replace("2026-07-01 12:00", "2026-07-01 15:30")
    warehouse = tmp_path / "w.duckdb"
    root = _wide_bundle(tmp_path, text)
    manifest = yaml.safe_load((root / "run.yaml").read_text())
    manifest["timezone"] = "Asia/Kolkata"
    (root / "run.yaml").write_text(yaml.safe_dump(manifest))
    ingest_bundle(root, warehouse, **QUIET)
    got = _query(warehouse, "select sampled_at from host_samples order by line_no")
    assert got["sampled_at"].dt.strftime("%H:%M:%S").tolist() == ["10:00:00", "10:00:02", "10:00:06"]


def test_an_unknown_zone_falls_back_to_the_manifest_zone_and_says_so(tmp_path):
    text = WIDE.replace("CEST", "XYZT")
    report = ingest_bundle(_wide_bundle(tmp_path, text), tmp_path / "w.duckdb", **QUIET)
    assert any("'XYZT'" in note and "manifest timezone UTC" in note for note in report.sources[0].notes)


def test_plain_vmstat_needs_started_at_and_interval(tmp_path, samples):
    text = (samples / "bundle-echo/app1/vmstat.log").read_text()
    with pytest.raises(SourceError, match="started_at.*interval_s"):
        ingest_bundle(_wide_bundle(tmp_path, text), tmp_path / "w.duckdb", **QUIET)


def test_too_many_unreadable_lines_refuse_the_file(tmp_path, samples):
    text = (samples / "bundle-echo/app1/vmstat-t.log").read_text().replace(" 0  0 2026-12-02 09:47:0", " 0 2026-12-02 09:47:0")
    root = write_bundle(tmp_path / "b", {"v.log": text}, [{"kind": "vmstat", "host": "h", "path": "v.log"}],
                        [{"index": 1, "start": "2026-12-02T09:46:48Z", "end": "2026-12-02T09:46:58Z"}])
    with pytest.raises(IngestError, match=r"(?s)v.log: 5 of 28 lines .* expected 17 values plus date and time .*found 18"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)
