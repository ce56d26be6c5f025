"""jstat -gc: a real JVM sampled here (English and German number formats), and edge cases, against pandas."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from tasks.warehouse.ingest import ingest_bundle
from tasks.warehouse.sources.base import SourceError
from tests.bundles import write_bundle

QUIET = {"progress": lambda message: None}
ALLOCATOR = """\
import java.util.ArrayList;
import java.util.List;

public class Allocator {
    public static void main(String[] args) throws Exception {
        System.out.println("started " + java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime());
        System.out.flush();
        List<byte[]> kept = new ArrayList<>();
        long begin = System.currentTimeMillis();
        boolean collected = false;
        int i = 0;
        while (System.currentTimeMillis() - begin < Long.parseLong(args[0])) {
            byte[] chunk = new byte[32 * 1024];  // about 64 MB/s, one chunk in 100 kept (old generation grows)
            if (i++ % 100 == 0) kept.add(chunk);
            if (!collected && System.currentTimeMillis() - begin > 2500) { System.gc(); collected = true; }
            if (i % 200 == 0) Thread.sleep(10);
        }
        System.out.println("kept " + kept.size());
        System.out.flush();
        System.in.read();  // alive, idle, until the test is done: a late jstat still gets all its samples
    }
}
"""


def _query(warehouse, sql, params=None) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


def independent_jstat(text: str) -> pd.DataFrame:
    """Header names from the first line; rows are the lines that do not repeat it; comma = decimal point."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    header = lines[0]
    rows = [[None if v == "-" else float(v.replace(",", ".")) for v in line] for line in lines if line != header]
    return pd.DataFrame(rows, columns=header)


def expected_jvm_stats(frame: pd.DataFrame, iterations: list[dict]) -> pd.DataFrame:
    """Counters: last sample before end minus last sample before start (else first inside); heap inside."""
    out = []
    for it in iterations:
        start, end = pd.Timestamp(it["start"]), pd.Timestamp(it["end"])
        inside = frame[(frame["at"] >= start) & (frame["at"] < end)]
        before_end = frame[frame["at"] < end].iloc[-1]
        before_start = frame[frame["at"] < start]
        first = before_start.iloc[-1] if len(before_start) else inside.iloc[0]
        span = (before_end["at"] - first["at"]).total_seconds()
        gc_time = before_end["GCT"] - first["GCT"]
        out.append({
            "iteration": it["index"], "samples": len(inside),
            "young_gc_count": before_end["YGC"] - first["YGC"], "full_gc_count": before_end["FGC"] - first["FGC"],
            "gc_time_s": gc_time, "gc_overhead_pct": 100 * gc_time / span if span else np.nan,
            "young_used_max_kb": (inside["EU"] + inside["S0U"] + inside["S1U"]).max(),
            "old_used_start_kb": inside["OU"].iloc[0], "old_used_end_kb": inside["OU"].iloc[-1],
            "old_used_max_kb": inside["OU"].max(), "old_capacity_kb": inside["OC"].iloc[-1],
        })
    return pd.DataFrame(out)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@pytest.fixture(scope="module")
def real_jstat(tmp_path_factory):
    """A JVM that allocates for 6 s (System.gc() at 2.5 s) and then idles until killed, sampled by jstat in English
    and German locales (5 samples each, however late a busy machine starts jstat)."""
    folder = tmp_path_factory.mktemp("jvm")
    (folder / "Allocator.java").write_text(ALLOCATOR)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}
    jvm = subprocess.Popen(["java", "-Xmx96m", "-XX:+UseG1GC", "Allocator.java", "6000"], cwd=folder,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        first = jvm.stdout.readline()
        assert first.startswith("started "), first
        jvm_started_at = datetime.fromtimestamp(int(first.split()[1]) / 1000, tz=timezone.utc)
        launched = datetime.now(timezone.utc)
        english = subprocess.Popen(["jstat", "-gc", "-t", str(jvm.pid), "1000", "5"],
                                   stdout=subprocess.PIPE, text=True, env=env)
        german = subprocess.Popen(["jstat", "-J-Duser.language=de", "-J-Duser.country=DE", "-gc", "-t", "-h3",
                                   str(jvm.pid), "1000", "5"], stdout=subprocess.PIPE, text=True, env=env)
        english_text, _ = english.communicate(timeout=60)
        german_text, _ = german.communicate(timeout=60)
        assert english.returncode == 0 and german.returncode == 0
    finally:
        jvm.kill()
        jvm.wait()
    return jvm_started_at, launched, english_text, german_text


def test_real_jstat_matches_an_independent_parse(real_jstat, tmp_path):
    jvm_started_at, launched, english_text, german_text = real_jstat
    assert "," in german_text.splitlines()[1] and german_text.count("Timestamp") == 2  # -h3 repeats the header
    english, german = independent_jstat(english_text), independent_jstat(german_text)
    english["at"] = pd.Timestamp(launched.replace(microsecond=launched.microsecond // 1000 * 1000)) + \
        pd.to_timedelta(english["Timestamp"] - english["Timestamp"].iloc[0], unit="s")
    german["at"] = pd.Timestamp(jvm_started_at) + pd.to_timedelta(german["Timestamp"], unit="s")
    middle = german["at"].iloc[2]
    iterations = [
        {"index": 1, "start": _iso(german["at"].iloc[0] - timedelta(seconds=0.5)), "end": _iso(middle)},
        {"index": 2, "start": _iso(middle), "end": _iso(german["at"].iloc[-1] + timedelta(seconds=0.5))},
    ]
    root = write_bundle(
        tmp_path / "b", {"en.log": english_text, "de.log": german_text},
        [{"kind": "jstat", "host": "en", "path": "en.log", "first_sample_at": _iso(launched)},
         {"kind": "jstat", "host": "de", "path": "de.log", "jvm_started_at": _iso(jvm_started_at)}],
        iterations,
    )
    warehouse = tmp_path / "w.duckdb"
    report = ingest_bundle(root, warehouse, **QUIET)
    assert [(s.rows, s.rejected) for s in report.sources] == [(5, 0), (5, 0)]

    for host, frame in (("en", english), ("de", german)):
        got = _query(warehouse, "select * from host_samples where host = $h order by line_no", {"h": host})
        assert got["sampled_at"].tolist() == frame["at"].tolist()
        assert got["old_used_kb"].tolist() == frame["OU"].tolist()
        assert got["eden_used_kb"].tolist() == frame["EU"].tolist()
        assert got["survivor_capacity_kb"].tolist() == (frame["S0C"] + frame["S1C"]).tolist()
        assert got["young_gc_count"].tolist() == frame["YGC"].tolist()
        assert got["concurrent_gc_count"].tolist() == frame["CGC"].tolist()
        assert got["gc_time_s"].tolist() == frame["GCT"].tolist()
        assert got["jvm_uptime_s"].tolist() == frame["Timestamp"].tolist()

    got = _query(warehouse, "select * from jvm_iteration_stats where host = 'de' order by iteration")
    expected = expected_jvm_stats(german, iterations)
    for column in expected.columns:
        assert got[column].tolist() == pytest.approx(expected[column].tolist(), nan_ok=True), column
    # System.gc() at 2.5 s is a full GC of G1; a sampler sees it inside an iteration unless it started late (a
    # busy machine: jstat's first sample came after it), so the findings are those its own counters give
    assert german["FGC"].iloc[-1] >= 1 and english["FGC"].iloc[-1] >= 1
    expected = set()
    for host, frame in (("en", english), ("de", german)):
        for it in iterations:
            inside = frame[(frame["at"] >= pd.Timestamp(it["start"])) & (frame["at"] < pd.Timestamp(it["end"]))]
            if len(inside) and expected_jvm_stats(frame, [it])["full_gc_count"].iloc[0] > 0:
                expected.add((host, it["index"]))
    findings = _query(warehouse, "select host, iteration from health_findings where rule = 'full_gc' "
                                 "and severity = 'warn'")
    assert set(findings.itertuples(index=False, name=None)) == expected


JDK8 = """\
2026-03-01T10:00:00.000+01:00 Timestamp        S0C    S1C    S0U    S1U      EC       EU        OC         OU       MC     MU    CCSC   CCSU   YGC     YGCT    FGC    FGCT     GCT
2026-03-01T10:00:00.000+01:00           12,5 1024,0 1024,0    0,0  512,0   8192,0   4096,0    20480,0     1000,0  4864,0 4500,1  512,0  400,0      3    0,030     0    0,000    0,030
2026-03-01T10:00:02.000+01:00           14,5 1024,0 1024,0  256,0    0,0   8192,0   1024,0    20480,0     1500,0  4864,0 4600,2  512,0  410,0      4    0,041     -        -    0,041
this line is not jstat output
2026-03-01T10:00:04.000+01:00           16,5 1024,0 1024,0  256,0    0,0   8192,0   2048,0    20480,0     1400,0  4864,0 4600,2  512,0  410,0      4    0,041     1    0,250    0,291
"""


def test_jdk8_columns_missing_values_decimal_comma_and_own_timestamps(tmp_path):
    root = write_bundle(tmp_path / "b", {"j.log": JDK8},
                        [{"kind": "jstat", "host": "old", "path": "j.log", "max_rejected_pct": 30}],
                        [{"index": 1, "start": "2026-03-01T09:00:01Z", "end": "2026-03-01T09:00:10Z"}])
    warehouse = tmp_path / "w.duckdb"
    report = ingest_bundle(root, warehouse, **QUIET)
    assert (report.sources[0].rows, report.sources[0].rejected) == (3, 1)
    got = _query(warehouse, "select sampled_at, iteration, old_used_kb, full_gc_count, full_gc_time_s, "
                            "concurrent_gc_count, gc_count_since_previous from host_samples order by line_no")
    assert got["sampled_at"].dt.strftime("%H:%M:%S").tolist() == ["09:00:00", "09:00:02", "09:00:04"]
    assert got["iteration"].fillna(-1).tolist() == [-1, 1, 1]
    assert got["old_used_kb"].tolist() == [1000.0, 1500.0, 1400.0]
    assert got["full_gc_count"].fillna(-1).tolist() == [0, -1, 1]
    assert got["concurrent_gc_count"].isna().all()  # JDK 8 has no CGC column
    stats = _query(warehouse, "select * from jvm_iteration_stats")
    # counted from the last sample before 09:00:01 (line 2) to the last one before the end (line 5)
    assert stats["young_gc_count"].tolist() == [1]
    assert stats["full_gc_count"].tolist() == [1]
    assert stats["gc_time_s"].tolist() == pytest.approx([0.261])
    assert stats["gc_overhead_pct"].tolist() == pytest.approx([100 * 0.261 / 4])
    assert _query(warehouse, "select reason from rejected_lines")["reason"][0].startswith("expected 1")


def test_uptime_going_back_is_rejected_not_misplaced(tmp_path, samples):
    text = (samples / "bundle-echo/app1/jstat.log").read_text()
    lines = text.splitlines(keepends=True)
    text = "".join(lines + lines[-3:])  # the last three samples again
    root = write_bundle(tmp_path / "b", {"j.log": text},
                        [{"kind": "jstat", "host": "a", "path": "j.log", "max_rejected_pct": 20,
                          "first_sample_at": "2026-12-02T09:46:42.243Z"}],
                        [{"index": 1, "start": "2026-12-02T09:46:48Z", "end": "2026-12-02T09:46:58Z"}])
    warehouse = tmp_path / "w.duckdb"
    report = ingest_bundle(root, warehouse, **QUIET)
    assert (report.sources[0].rows, report.sources[0].rejected) == (28, 3)
    reasons = _query(warehouse, "select line_no, reason from rejected_lines order by line_no")
    assert reasons["line_no"].tolist() == [30, 31, 32]
    assert "52.3 s is not after the previous line's 56.3 s" in reasons["reason"][0]


def test_jstat_without_a_time_needs_an_anchor(tmp_path, samples):
    root = write_bundle(tmp_path / "b", {"j.log": samples / "bundle-echo/app1/jstat.log"},
                        [{"kind": "jstat", "host": "a", "path": "j.log"}],
                        [{"index": 1, "start": "2026-12-02T09:46:48Z", "end": "2026-12-02T09:46:58Z"}])
    with pytest.raises(SourceError, match="first_sample_at.*jvm_started_at"):
        ingest_bundle(root, tmp_path / "w.duckdb", **QUIET)


def test_echo_bundle_jvms_per_iteration(samples, tmp_path):
    """The two JVMs of the echo sample bundle, placed by first_sample_at, against the rule computed in pandas."""
    manifest = yaml.safe_load((samples / "bundle-echo" / "run.yaml").read_text())
    sources = [s for s in manifest["sources"] if s["kind"] == "jstat"]
    root = write_bundle(tmp_path / "b", {s["path"]: samples / "bundle-echo" / s["path"] for s in sources},
                        sources, manifest["iterations"])
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, **QUIET)
    for source in sources:
        frame = independent_jstat((samples / "bundle-echo" / source["path"]).read_text())
        frame["at"] = pd.Timestamp(source["first_sample_at"]) + pd.to_timedelta(
            frame["Timestamp"] - frame["Timestamp"].iloc[0], unit="s")
        expected = expected_jvm_stats(frame, manifest["iterations"])
        got = _query(warehouse, "select * from jvm_iteration_stats where host = $h order by iteration",
                     {"h": source["host"]})
        for column in expected.columns:
            assert got[column].tolist() == pytest.approx(expected[column].tolist(), nan_ok=True), column
