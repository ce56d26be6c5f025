"""Ingest speed and memory against DuckDB's own reads of the same files, for an access log and a JTL.

Generates N rows of each (default 10 M), ingests each bundle in a fresh process (so its peak RSS is its
own), and times three DuckDB yardsticks on the same file in the same run: counting its lines (the bare
scan), parsing every column typed (keeping nothing), and loading every column into a table. The ingest is
timed with one requirement (p95 of the file's side) and without any, paired run by run with DuckDB's load
(`--repeat`: the median of that many pairs); then the same file again as another run into the warehouse the ingest
left ("next night": a nightly warehouse holds the runs before, which its deletes, zone maps and scans meet).
Targets (issue 22): the ingest with every mart at least as fast
as DuckDB's load (speed ratio >= 1.0), a requirement adding under 5 %, peak RSS under 2 GB at 100 M rows.
Prints one block per file: each step's seconds, rows/s, and the ingest's rate as a share of that step's.

    .venv/bin/python bench/ingest.py [--rows 10000000] [--repeat 1] [--keep DIR] [--only access_log|jtl]
                                     [--warehouse LAKE_URL] [--gzip] [--processes N]

With --processes N (for small files: `--rows 1000 --processes 10`), the fixed cost of an ingest (issue 22: under
0.4 s above DuckDB's own start): the median wall and CPU time of N whole processes, each ingesting the bundle
(`python -c 'ingest_bundle(...)'`, imports included) into a fresh warehouse file and into the one already
holding the run, against N processes that only start DuckDB and load the same file
(`python -c 'import duckdb; duckdb.connect(f).execute(load)'`), taken in turns so that a shared machine's load
falls on both alike.

With --gzip, each file is gzipped (`gzip -1`) before it is ingested, and the yardsticks read the .gz too.

With --warehouse, the same bundle is also ingested into that warehouse (a DuckLake URL, credentials in the
environment as docs/scaling.md says) and its rate printed beside the file's (target: at least half).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import yaml

ROOT = Path(__file__).resolve().parents[1]
START_EPOCH_MS = 1_764_000_000_000  # 2025-11-24T16:00:00Z
ITERATIONS = 5
# One ingest in a fresh process (its peak RSS its own): prints its seconds, CPU seconds and peak RSS as JSON.
# Its wall clock starts after the imports, pandas among them: duckdb's client imports pandas at a process's first
# bound value (0.2-0.3 s), which DuckDB's load, timed in this process after its scans, never pays either. Its CPU
# seconds are the whole process's, imports included.
CHILD = """
import json, resource, sys, time
import pandas
from tasks.warehouse.ingest import ingest_bundle
started = time.perf_counter()
ingest_bundle(sys.argv[1], sys.argv[2], progress=lambda m: None)
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
used = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"s": time.perf_counter() - started, "cpu_s": used.ru_utime + used.ru_stime,
                  "rss_mb": int(hwm.split()[1]) / 1024}))
"""


def _iterations(rows: int, rate_per_s: int) -> list[dict]:
    span_s = rows / rate_per_s
    step = span_s / ITERATIONS
    start = START_EPOCH_MS / 1000
    stamp = lambda s: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{int(s * 1000) % 1000:03d}Z"
    return [
        {"index": i + 1, "start": stamp(start + i * step), "end": stamp(start + (i + 1) * step), "load": {"vus": 10 * (i + 1)}}
        for i in range(ITERATIONS)
    ]


def generate_access_log(path: Path, rows: int, rate_per_s: int) -> None:
    """Tomcat `%h %l %u %t "%r" %s %b %D` lines, `rate_per_s` per second, 50 labels, 0.1 % errors."""
    duckdb.sql(
        f"""
        copy (
            select '10.0.' || (i % 200) || '.' || (i % 97) || ' - - ['
                || strftime(make_timestamp(({START_EPOCH_MS} + (i * 1000 // {rate_per_s})) * 1000), '%d/%b/%Y:%H:%M:%S')
                || ' +0000] "' || case when i % 5 = 0 then 'POST' else 'GET' end || ' /api/v1/item/' || (i % 50)
                || '?session=' || (i % 1000) || ' HTTP/1.1" ' || case when i % 1000 = 7 then 503 else 200 end
                || ' ' || (200 + i % 4000) || ' ' || (1 + (i * 7919) % 250)
            from range({rows}) t(i)
        ) to '{path}' (format csv, header false, quote '', delim '\x1f')
        """
    )


def generate_jtl(path: Path, rows: int, rate_per_s: int, spread_ms: int | None = None) -> None:
    """CSV JTL with JMeter's default columns, a quoted failure message on 0.1 % of rows. Elapsed: 1-250 ms, five
    values per label; with `spread_ms`, a hash of the row spread over 1..spread_ms (most values distinct)."""
    elapsed = f"1 + hash(i) % {int(spread_ms)}" if spread_ms else "1 + (i * 7919) % 250"
    header = (
        "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,"
        "bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect"
    )
    duckdb.sql(
        f"""
        copy (
            select {START_EPOCH_MS} + (i * 1000 // {rate_per_s}) || ',' || ({elapsed}) || ',GET item '
                || (i % 50) || ',' || case when i % 1000 = 7 then '503,Service Unavailable' else '200,OK' end
                || ',Thread Group 1-' || (i % 64) || ',text,' || case when i % 1000 = 7 then 'false' else 'true' end
                || ',' || case when i % 1000 = 7 then '"Test failed: code expected 200, got 503"' else '' end
                || ',' || (200 + i % 4000) || ',140,64,64,http://10.0.0.1:8080/api/v1/item/' || (i % 50) || ','
                || (i % 200) || ',0,' || (i % 3)
            from range({rows}) t(i)
        ) to '{path}' (format csv, header false, quote '', delim '\x1f')
        """
    )
    body = path.read_bytes() if rows <= 100_000 else None
    if body is not None:
        path.write_bytes(header.encode() + b"\n" + body)
    else:  # prepend the header without loading the file
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as out, open(path, "rb") as src:
            out.write(header.encode() + b"\n")
            shutil.copyfileobj(src, out, 1 << 24)
        tmp.replace(path)


# How DuckDB itself reads each file when asked for every column, typed: the access log as space-separated
# fields with quoted strings (its sniffer sees one column in a log line), the JTL with its header.
TYPED_READ = {
    "access_log": "read_csv($path, delim = ' ', quote = '\"', escape = '\\', header = false)",
    "jtl": "read_csv($path, header = true)",
}


def load_sql(kind: str) -> str:
    """DuckDB's own typed load of the file ($path) into a table: the yardstick (here and bench/lysiro.py)."""
    return f"create table rows as select * from {TYPED_READ[kind]}"


def _written_back() -> None:
    """Write back the files the step before left (the generated file, a database deleted or closed) before a step is
    timed: their pages are otherwise written while the next step runs, and took half of the time in I/O wait."""
    os.sync()


def _timed(con: duckdb.DuckDBPyConnection, sql: str, path: Path) -> float:
    _written_back()
    started = time.perf_counter()
    con.execute(sql, {"path": str(path)}).fetchall()
    return time.perf_counter() - started


def line_scan_seconds(path: Path) -> float:
    """DuckDB counting the lines of the file (one untyped column, never split): the floor of any reader."""
    sql = ("select count(*) from read_csv($path, columns = {'line': 'VARCHAR'}, header = false, "
           "delim = E'\\x1f', quote = '', escape = '')")
    return _timed(duckdb.connect(), sql, path)


def typed_scan_seconds(kind: str, path: Path) -> float:
    """DuckDB parsing every column of every line to its sniffed type, keeping nothing."""
    con = duckdb.connect()
    columns = [row[0] for row in con.execute(f"describe select * from {TYPED_READ[kind]}", {"path": str(path)}).fetchall()]
    counts = ", ".join(f'count("{name}")' for name in columns)  # count(col) makes the reader convert each column
    return _timed(con, f"select {counts} from {TYPED_READ[kind]}", path)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def duckdb_load_seconds(kind: str, path: Path, workdir: Path) -> tuple[float, float]:
    """DuckDB storing every column of the file in a table of a fresh database file, closed (checkpointed) as
    the ingest closes its warehouse: the least a loader does. Returns (wall, CPU) seconds."""
    database = workdir / f"{kind}-duckdb-load.duckdb"
    database.unlink(missing_ok=True)
    _written_back()
    wall, cpu = time.perf_counter(), _cpu_seconds()
    con = duckdb.connect(str(database))
    con.execute(load_sql(kind), {"path": str(path)})
    con.close()
    wall, cpu = time.perf_counter() - wall, _cpu_seconds() - cpu
    database.unlink()
    return wall, cpu


def ingest_in_child(bundle: Path, warehouse: Path) -> tuple[float, float, float]:
    """Ingest in a fresh process (CHILD); returns (wall seconds, CPU seconds, peak RSS in MB of
    that process)."""
    _written_back()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(bundle), str(warehouse)], capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode != 0:
        raise SystemExit(f"ingest of {bundle} failed:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return figures["s"], figures["cpu_s"], figures["rss_mb"]


def _median(measure: Callable[[], tuple[float, ...]], repeat: int) -> tuple[float, ...]:
    """Each figure of `measure` as the median of `repeat` runs."""
    runs = [measure() for _ in range(repeat)]
    return tuple(statistics.median(run[i] for run in runs) for i in range(len(runs[0])))


def process_seconds(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one whole process, its start and imports included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def fixed_costs(kind: str, bundle: Path, raw: Path, workdir: Path, repeat: int) -> dict[str, tuple[float, ...]]:
    """Median wall and CPU seconds of whole processes: the ingest into a fresh and into an existing warehouse,
    and DuckDB's own start and load of the same file, taken in turns."""
    ingest = [sys.executable, "-c", "import sys; from tasks.warehouse.ingest import ingest_bundle; "
              "ingest_bundle(sys.argv[1], sys.argv[2], progress=lambda m: None)", str(bundle)]
    # The path written into the SQL, not bound: any bound value makes duckdb's client import pandas (0.3 s),
    # which DuckDB's own load does not need. It is this bench's own temporary file.
    load = f"create table rows as select * from {TYPED_READ[kind].replace('$path', repr(str(raw)))}"
    database = workdir / f"{kind}-duckdb-start.duckdb"
    duckdb_load = [sys.executable, "-c", "import sys, duckdb; duckdb.connect(sys.argv[1]).execute(sys.argv[2])",
                   str(database), load]
    fresh, existing = workdir / f"{kind}-fresh.duckdb", workdir / f"{kind}-existing.duckdb"
    process_seconds([*ingest, str(existing)])  # the warehouse that already holds the run

    def one_turn() -> tuple[float, ...]:
        for path in (fresh, database):
            for made in path.parent.glob(path.name + "*"):
                made.unlink()
        return (*process_seconds([*ingest, str(fresh)]), *process_seconds([*ingest, str(existing)]),
                *process_seconds(duckdb_load))

    figures = _median(one_turn, repeat)
    return {"fresh": figures[0:2], "existing": figures[2:4], "duckdb": figures[4:6]}


def bench_one(kind: str, rows: int, workdir: Path, lake: str | None = None, packed: bool = False,
              repeat: int = 1, processes: int = 0) -> dict:
    rate = 2_000
    bundle = workdir / kind
    bundle.mkdir(parents=True, exist_ok=True)
    if kind == "access_log":
        raw = bundle / "access.log"
        generate_access_log(raw, rows, rate)
        source = {"kind": "access_log", "host": "app", "path": raw.name, "preset": "tomcat_common_d", "duration_unit": "ms"}
    else:
        raw = bundle / "results.jtl"
        generate_jtl(raw, rows, rate)
        source = {"kind": "jtl", "host": "loadgen", "path": raw.name}
    if packed:
        subprocess.run(["gzip", "-1", "-f", str(raw)], check=True)
        raw = raw.with_name(raw.name + ".gz")
        source["path"] = raw.name
    side = "server" if kind == "access_log" else "client"
    manifest = {
        "format": 1, "run_id": f"bench-{kind}-{int(time.time())}", "campaign": "bench", "timezone": "UTC",
        "iterations": _iterations(rows, rate),
        "requirements": [{"id": "p95", "metric": "p95_ms", "op": "<", "threshold": 200, "side": side}],
        "sources": [source],
    }

    def ingest(requirements: bool, next_night: bool = False) -> tuple[float, float, float]:
        """Into a fresh warehouse; or, `next_night`, the same file as another run into the warehouse the ingest
        before this one left (holding a run of the same size, as a nightly warehouse holds last night's)."""
        written = manifest if requirements else {key: value for key, value in manifest.items() if key != "requirements"}
        if next_night:
            written = {**written, "run_id": f"{manifest['run_id']}-next"}
        (bundle / "run.yaml").write_text(yaml.safe_dump(written, sort_keys=False))
        warehouse = workdir / f"{kind}.duckdb"
        if not next_night:
            warehouse.unlink(missing_ok=True)
        return ingest_in_child(bundle, warehouse)

    # the best of two for DuckDB's scans, which vary most with the page cache; first, so that their bound path pays
    # the duckdb client's one pandas import (0.3 s) and the load timed after it does not
    line_s = min(line_scan_seconds(raw) for _ in range(2))
    typed_s = min(typed_scan_seconds(kind, raw) for _ in range(2))
    # paired run by run: DuckDB's load, then the ingest without and with a requirement, `repeat` times
    load_s, load_cpu, bare_s, bare_cpu, ingest_s, ingest_cpu, rss_mb, next_s, next_cpu = _median(
        lambda: (*duckdb_load_seconds(kind, raw, workdir), *ingest(False)[:2], *ingest(True),
                 *ingest(True, next_night=True)[:2]), repeat)
    lake_s = ingest_in_child(bundle, lake)[0] if lake else None
    return {
        "processes": processes, "fixed": fixed_costs(kind, bundle, raw, workdir, processes) if processes else None,
        "lake_s": lake_s, "bare_s": bare_s, "bare_cpu": bare_cpu, "load_cpu": load_cpu, "ingest_cpu": ingest_cpu,
        "kind": kind, "rows": rows, "size_mb": raw.stat().st_size / 1e6, "rss_mb": rss_mb,
        "seconds": {
            "DuckDB line scan (count lines)": line_s,
            "DuckDB typed scan (every column)": typed_s,
            "DuckDB load (every column into a table)": load_s,
            "perfcampaign ingest": ingest_s,
            "perfcampaign ingest, next night": next_s,
        },
        "next_cpu": next_cpu,
    }


def print_result(r: dict) -> None:
    """One block per file: each step's time and rate, and the ingest's rate as a share of that step's."""
    print(f"\n{r['kind']}: {r['rows']:,} rows, {r['size_mb']:,.0f} MB")
    print(f"  {'step':<41} {'seconds':>8} {'rows/s':>12} {'ingest/step':>12}")
    ingest_s = r["seconds"]["perfcampaign ingest"]
    for step, seconds in r["seconds"].items():
        print(f"  {step:<41} {seconds:>8.2f} {r['rows'] / seconds:>12,.0f} {seconds / ingest_s:>12.2f}")
    load_s = r["seconds"]["DuckDB load (every column into a table)"]
    print(f"  ingest speed / DuckDB load speed: {load_s / ingest_s:.2f} (target >= 1.0); in CPU time "
          f"{r['load_cpu'] / r['ingest_cpu']:.2f} ({r['ingest_cpu']:.2f} s against {r['load_cpu']:.2f} s)")
    next_s = r["seconds"]["perfcampaign ingest, next night"]
    print(f"  next night (into the warehouse holding the run above): {load_s / next_s:.2f}; in CPU time "
          f"{r['load_cpu'] / r['next_cpu']:.2f} ({r['next_cpu']:.2f} s)")
    print(f"  a requirement adds {100 * (ingest_s / r['bare_s'] - 1):+.1f} % to the ingest, "
          f"{100 * (r['ingest_cpu'] / r['bare_cpu'] - 1):+.1f} % in CPU time (target < 5 %)")
    print(f"  peak RSS of the ingest: {r['rss_mb']:,.0f} MB (target < 2,048 MB at 100 M rows)", flush=True)
    if r["fixed"]:
        duckdb_wall, duckdb_cpu = r["fixed"]["duckdb"]
        print(f"  whole processes, median of {r['processes']} (wall / CPU s; target: the ingest under 0.4 s above "
              "DuckDB's start and load):")
        print(f"    {'python -c: import duckdb, load the file into a table':<56} {duckdb_wall:5.2f} / {duckdb_cpu:5.2f}")
        for name, into in (("fresh", "a fresh warehouse"), ("existing", "the warehouse holding the run")):
            wall, cpu = r["fixed"][name]
            print(f"    {f'perfcampaign ingest into {into}':<56} {wall:5.2f} / {cpu:5.2f}   "
                  f"above DuckDB: {wall - duckdb_wall:5.2f} / {cpu - duckdb_cpu:5.2f}", flush=True)
    if r["lake_s"]:
        print(f"  {'perfcampaign ingest into the lake':<41} {r['lake_s']:>8.2f} {r['rows'] / r['lake_s']:>12,.0f} "
              f"{ingest_s / r['lake_s']:>12.2f}  (lake rate / file rate; target >= 0.5)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keep", type=Path, help="keep generated files here instead of a temp folder")
    parser.add_argument("--only", choices=("access_log", "jtl"))
    parser.add_argument("--warehouse", help="also ingest into this DuckLake URL (ducklake:...)")
    parser.add_argument("--gzip", action="store_true", help="gzip each file before reading it")
    parser.add_argument("--repeat", type=int, default=1, help="median of this many paired runs (DuckDB load, ingests)")
    parser.add_argument("--processes", type=int, default=0,
                        help="also time N whole processes of the ingest against DuckDB's start and load (fixed cost)")
    args = parser.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="perfcampaign-bench-"))
    kinds = [args.only] if args.only else ["access_log", "jtl"]
    try:
        for kind in kinds:
            print_result(bench_one(kind, args.rows, workdir, args.warehouse, args.gzip, args.repeat, args.processes))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
