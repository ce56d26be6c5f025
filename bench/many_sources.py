"""A bundle of many small sources (issue 18 fault 4: 10,000 one-line access logs took 318 s, then ran out of memory).

Writes N one-line access logs, one source each, ingests them in a fresh process and prints seconds, peak
RSS (VmHWM), the cost per source and whether every row arrived.

    .venv/bin/python bench/many_sources.py [--sources 1000 10000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import yaml

from ingest import CHILD  # the same child as bench/ingest.py's: seconds, CPU and peak RSS of one ingest

ROOT = Path(__file__).resolve().parents[1]
LINE = '10.0.0.{h} - - [02/Dec/2026:14:{m:02d}:{s:02d} +0000] "GET /a/{n} HTTP/1.1" 200 5 {ms}\n'


def write_bundle(root: Path, count: int) -> None:
    """`count` one-line access logs app/NNNNN.log, one source each, in one iteration of ten minutes."""
    sources = []
    for n in range(count):
        path = f"app/{n:05d}.log"
        (root / "app").mkdir(parents=True, exist_ok=True)
        (root / path).write_text(LINE.format(h=n % 250, m=n // 60 % 10, s=n % 60, n=n, ms=10 + n % 90))
        sources.append({"kind": "access_log", "host": "app", "path": path, "preset": "tomcat_common_d",
                        "duration_unit": "ms"})
    manifest = {"format": 1, "run_id": f"many-{count}", "campaign": "bench", "scenario": "many", "timezone": "UTC",
                "iterations": [{"index": 1, "start": "2026-12-02T14:00:00Z", "end": "2026-12-02T14:10:00Z"}],
                "requirements": [], "sources": sources}
    (root / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--keep", type=Path, help="write the bundles and warehouses here instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or Path(scratch)
        for count in args.sources:
            bundle, warehouse = base / f"bundle-{count}", base / f"w-{count}.duckdb"
            write_bundle(bundle, count)
            done = subprocess.run([sys.executable, "-c", CHILD, str(bundle), str(warehouse)], capture_output=True,
                                  text=True, cwd=ROOT, check=False)
            if done.returncode:
                print(f"{count:>6} sources: failed: {done.stderr.strip().splitlines()[-1]}")
                continue
            figures = json.loads(done.stdout)
            with duckdb.connect(str(warehouse), read_only=True) as con:
                rows, = con.execute("select count(*) from requests").fetchone()
            print(f"{count:>6} sources: {figures['s']:6.1f} s ({figures['cpu_s']:.1f} s CPU), peak RSS "
                  f"{figures['rss_mb']:6.0f} MB, {1000 * figures['s'] / count:.1f} ms per source, "
                  f"{rows:,} of {count:,} requests loaded")


if __name__ == "__main__":
    main()
