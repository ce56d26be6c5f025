"""Worst input for memory: a delimited log (access log or JTL) made only of junk lines (issue 14's "peak RSS under 1 GB").

Writes an access log of N junk lines (and a few good ones), ingests it in a fresh process with
max_rejected_pct 100, and prints seconds, peak RSS (VmHWM), lines counted rejected and lines kept.

    .venv/bin/python bench/junk.py [--lines 2000000 20000000] [--gzip] [--kind access_log|jtl] [--line-bytes 80]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import yaml

from ingest import CHILD  # one ingest in its own process: seconds, CPU and peak RSS

ROOT = Path(__file__).resolve().parents[1]
GOOD = '10.0.0.1 - - [02/Dec/2026:14:00:{s:02d} +0000] "GET /a HTTP/1.1" 200 5 12\n'
# nine words where the pattern has nine fields: every typed field fails (several errors per line); the last
# is padded to --line-bytes (DuckDB's cost of a stored reject grows with the line's length)
JUNK = 'junk {n} zz zzzzzzzzzz [zzzzzzzzzzzzzzzzzzzz] "zzzzzzzzzzzzzzz" abc def {n}{pad}\n'


JTL_HEADER = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,bytes\n"
JTL_GOOD = "1764684000{s:03d},12,GET a,200,OK,t 1-1,true,5\n"
JTL_JUNK = "junk {n},zz,zzzzzzzzzz,[zzzzzzzzzzzzzzzzzzzz],zzzzzzzzzzzzzzz,abc,def,{n}{pad}\n"
SOURCES = {
    "access_log": ("access.log", "", GOOD, JUNK, {"preset": "tomcat_common_d", "duration_unit": "ms"}),
    "jtl": ("results.jtl", JTL_HEADER, JTL_GOOD, JTL_JUNK, {}),
}


def write_bundle(folder: Path, kind: str, lines: int, packed: bool, line_bytes: int) -> Path:
    name, header, good, junk, options = SOURCES[kind]
    name += ".gz" if packed else ""
    raw = folder / name
    with (gzip.open(raw, "wt", compresslevel=1) if packed else open(raw, "w")) as out:
        out.write(header + "".join(good.format(s=s) for s in range(10)))
        pad = "z" * max(line_bytes - len(junk.format(n=0, pad="")), 1)
        block = "".join(junk.format(n=n, pad=pad) for n in range(100_000))
        for _ in range(lines // 100_000):
            out.write(block)
    manifest = {
        "format": 1, "run_id": f"junk-{lines}", "campaign": "bench", "timezone": "UTC",
        "iterations": [{"index": 1, "start": "2026-12-02T14:00:00Z", "end": "2026-12-02T14:10:00Z"}],
        "sources": [{"kind": kind, "host": "app", "path": name, "max_rejected_pct": 100, **options}],
    }
    (folder / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[2_000_000, 20_000_000])
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--kind", choices=sorted(SOURCES), default="access_log")
    parser.add_argument("--line-bytes", type=int, default=80)
    args = parser.parse_args()
    for lines in args.lines:
        folder = Path(tempfile.mkdtemp(prefix="perfcampaign-junk-"))
        try:
            raw = write_bundle(folder, args.kind, lines, args.gzip, args.line_bytes)
            warehouse = folder / "w.duckdb"
            done = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(warehouse)], capture_output=True,
                                  text=True, cwd=ROOT, check=False)
            if done.returncode != 0:
                reason = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
                print(f"{lines:,} junk lines: ingest failed: {reason}", flush=True)
                continue
            figures = yaml.safe_load(done.stdout.strip().splitlines()[-1])
            with duckdb.connect(str(warehouse), read_only=True) as con:
                (loaded, rejected), = con.execute("select rows_loaded, rows_rejected from sources").fetchall()
                kept = con.execute("select count(*) from rejected_lines").fetchone()[0]
            print(f"{args.kind}, {lines:,} junk lines of {args.line_bytes} bytes ({raw.stat().st_size / 1e6:,.0f} MB{', gzip' if args.gzip else ''}): "
                  f"{figures['s']:.1f} s ({figures['cpu_s']:.1f} s CPU), peak RSS {figures['rss_mb']:,.0f} MB, {loaded} loaded, "
                  f"{rejected:,} rejected (counted), {kept:,} kept with reasons", flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
