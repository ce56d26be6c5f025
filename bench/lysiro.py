"""Lysiro's report against perfcampaign's ingest of the same JTL: time, memory and the percentiles per label.

Generates the JTL of bench/ingest.py (default 2 M rows, 50 labels, JMeter's 17 default columns), then runs, in
turn and each in a fresh process, `lysiro report FILE` and perfcampaign's ingest of a bundle holding that file
(one iteration over the whole file, `percentile_method: nearest_rank`, Lysiro's definition), --runs times each,
and DuckDB's own typed load of the file in a fresh process (the least a loader that stores the rows does). Prints the median wall time, CPU time (user + system) and peak RSS of each, then compares p50, p90, p95 and p99
of every label: Lysiro's own figures (read through its library, exact) against series_values of the ingest,
and prints every difference. That JTL has five distinct durations per label, where the two methods mostly
agree; so the same comparison runs on two JTLs whose durations are spread over 1..5000 ms (--spread-rows: a
small one, whose durations perfcampaign sorts, and a larger one, which it reads from their counts).

    .venv/bin/python bench/lysiro.py [--rows 2000000] [--runs 3] [--lysiro PATH] [--method nearest_rank|linear]

Lysiro (PyPI `lysiro`, a report tool for JMeter and k6) is not a dependency of perfcampaign: install it into a
virtual environment of its own and point --lysiro at its command (or put it on PATH):

    python3 -m venv /tmp/lysiro && /tmp/lysiro/bin/pip install lysiro==0.1.0
    .venv/bin/python bench/lysiro.py --lysiro /tmp/lysiro/bin/lysiro
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import yaml
from ingest import START_EPOCH_MS, generate_jtl, load_sql  # the same file as bench/ingest.py's JTL

ROOT = Path(__file__).resolve().parents[1]
GNU_TIME = "/usr/bin/time"  # Debian's package `time`
RATE_PER_S = 2_000
METRICS = ("p50_ms", "p90_ms", "p95_ms", "p99_ms")
INGEST = ("import sys; from tasks.warehouse.ingest import ingest_bundle; "
          "ingest_bundle(sys.argv[1], sys.argv[2], progress=lambda m: None)")
# DuckDB's own typed load of the same file into a fresh database file, closed: the least any loader does
DUCKDB_LOAD = ("import sys, duckdb; con = duckdb.connect(sys.argv[2]); "
               f"con.execute({load_sql('jtl')!r}, {{'path': sys.argv[1]}}); con.close()")
# Lysiro's own per-label figures, from the library its command runs (the terminal rounds a second to 10 ms)
LYSIRO_FIGURES = ("import json, sys; from lysiro_report.parse import read; from lysiro_report.stats import summarize; "
                  "print(json.dumps({s.label: [s.p50, s.p90, s.p95, s.p99] for s in summarize(read(sys.argv[1]))}))")


def timed(command: list[str], workdir: Path) -> dict:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one process; a non-zero exit raises.

    Measured by GNU time: a child forked from this process (duckdb loaded) would report this process's
    resident size as its own peak (the high-water mark survives exec)."""
    figures = workdir / "time.txt"
    done = subprocess.run([GNU_TIME, "-o", str(figures), "-f", "%e %U %S %M", *command], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} ... failed:\n{done.stderr}")
    wall, user, system, rss_kb = figures.read_text().split()[-4:]
    return {"wall_s": float(wall), "cpu_s": float(user) + float(system), "rss_mb": int(rss_kb) / 1024}


def write_bundle(folder: Path, rows: int, method: str, spread_ms: int | None = None) -> Path:
    """The bench's JTL in a bundle with one iteration over all of it, so a label's figures cover the whole file."""
    folder.mkdir(parents=True, exist_ok=True)
    generate_jtl(folder / "results.jtl", rows, RATE_PER_S, spread_ms)
    stamp = lambda ms: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + "Z"  # noqa: E731
    manifest = {
        "format": 1, "run_id": "lysiro-bench", "campaign": "bench", "timezone": "UTC", "percentile_method": method,
        "iterations": [{"index": 1, "start": stamp(START_EPOCH_MS - 1000),
                        "end": stamp(START_EPOCH_MS + rows * 1000 // RATE_PER_S + 2000)}],
        "sources": [{"kind": "jtl", "host": "loadgen", "path": "results.jtl"}],
    }
    (folder / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return folder / "results.jtl"


def lysiro_python(lysiro: str) -> str:
    """The interpreter of Lysiro's console script (its first line), to read its figures through its library."""
    first = Path(lysiro).read_text(errors="replace").splitlines()[0]
    if not first.startswith("#!"):
        raise SystemExit(f"{lysiro}: not a console script with a #! line; give --lysiro the command pip installed")
    return first[2:].strip()


def perfcampaign_figures(warehouse: Path) -> dict[str, list[float]]:
    """p50..p99 of each label of the client side over the run's one iteration (series_values)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select label, list(value order by list_position($metrics, metric)) from series_values "
            "where side = 'client' and host = '(all)' and label <> '(all)' and metric in $metrics group by label",
            {"metrics": list(METRICS)},
        ).fetchall()
    return dict(rows)


def compare_percentiles(lysiro: str, jtl: Path, warehouse: Path, method: str) -> None:
    """Lysiro's figures of `jtl` against those of its ingest into `warehouse`, every difference printed."""
    done = subprocess.run([lysiro_python(lysiro), "-c", LYSIRO_FIGURES, str(jtl)], capture_output=True, text=True,
                          check=True)
    theirs = json.loads(done.stdout)
    differences = differing(theirs, perfcampaign_figures(warehouse))
    print(f"  {jtl.parent.name}: {len(theirs)} labels x {len(METRICS)} percentiles, {differences} differ "
          f"(perfcampaign {method}, Lysiro nearest rank)", flush=True)


def differing(lysiro: dict[str, list[int]], ours: dict[str, list[float]]) -> int:
    """Print every label or figure that differs; returns how many figures differ."""
    differences = 0
    for label in sorted(set(lysiro) | set(ours)):
        if label not in lysiro or label not in ours:
            print(f"    {label}: only in {'Lysiro' if label in lysiro else 'perfcampaign'}")
            differences += len(METRICS)
            continue
        for metric, theirs, mine in zip(METRICS, lysiro[label], ours[label]):
            if theirs != mine:
                print(f"    {label} {metric}: Lysiro {theirs}, perfcampaign {mine}")
                differences += 1
    return differences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lysiro", default=shutil.which("lysiro"), help="Lysiro's command (default: on PATH)")
    parser.add_argument("--method", choices=("nearest_rank", "linear"), default="nearest_rank",
                        help="perfcampaign's percentile_method (Lysiro takes the nearest rank)")
    parser.add_argument("--spread-rows", type=int, nargs="*", default=[20_000, 1_000_000],
                        help="rows of the JTLs of spread durations whose percentiles are compared too")
    parser.add_argument("--keep", type=Path, help="keep the generated bundles and warehouses here")
    args = parser.parse_args()
    if not args.lysiro or not Path(args.lysiro).is_file():
        raise SystemExit("Lysiro is not installed (not on PATH, no --lysiro). Install it apart from perfcampaign:\n"
                         "  python3 -m venv /tmp/lysiro && /tmp/lysiro/bin/pip install lysiro==0.1.0\n"
                         "  .venv/bin/python bench/lysiro.py --lysiro /tmp/lysiro/bin/lysiro")
    if not Path(GNU_TIME).is_file():
        raise SystemExit(f"{GNU_TIME} (GNU time) measures each process: apt-get install -y time")
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="perfcampaign-lysiro-"))
    try:
        jtl = write_bundle(workdir / f"bench-{args.rows}-rows", args.rows, args.method)
        warehouse = workdir / "w.duckdb"
        print(f"{args.rows:,} rows, {jtl.stat().st_size / 1e6:,.0f} MB; load average {os.getloadavg()[0]:.1f}",
              flush=True)
        figures: dict[str, list[dict]] = {"Lysiro report": [], f"perfcampaign ingest ({args.method})": [],
                                          "DuckDB load (yardstick)": []}
        for _ in range(args.runs):  # in turn, so all see the same load
            figures["Lysiro report"].append(timed([args.lysiro, "report", str(jtl)], workdir))
            (workdir / "load.duckdb").unlink(missing_ok=True)
            figures["DuckDB load (yardstick)"].append(
                timed([sys.executable, "-c", DUCKDB_LOAD, str(jtl), str(workdir / "load.duckdb")], workdir))
            warehouse.unlink(missing_ok=True)
            figures[f"perfcampaign ingest ({args.method})"].append(
                timed([sys.executable, "-c", INGEST, str(jtl.parent), str(warehouse)], workdir))
        print(f"  {'median of ' + str(args.runs):<36} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12}")
        for name, runs in figures.items():
            print(f"  {name:<36} " + " ".join(
                f"{statistics.median(run[key] for run in runs):>{width}.2f}"
                for key, width in (("wall_s", 8), ("cpu_s", 8), ("rss_mb", 12))))
        print(f"  load average after: {os.getloadavg()[0]:.1f}\npercentiles per label:")
        compare_percentiles(args.lysiro, jtl, warehouse, args.method)
        for rows in args.spread_rows:
            spread = write_bundle(workdir / f"spread-{rows}-rows", rows, args.method, spread_ms=5000)
            timed([sys.executable, "-c", INGEST, str(spread.parent), str(workdir / f"spread-{rows}.duckdb")], workdir)
            compare_percentiles(args.lysiro, spread, workdir / f"spread-{rows}.duckdb", args.method)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
