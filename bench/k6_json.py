"""k6 `--out json` ingest time, with and without a custom metric (the second pass runs only with one).

Repeats the Point lines of the echo sample's real k6 output (tests/data/samples/bundle-echo) until the file
holds --requests requests, gzips it, ingests it in a fresh process and prints seconds and peak RSS. With
--custom, one custom Trend point per request is added (then the metric-points pass runs).

    .venv/bin/python bench/k6_json.py [--requests 500000] [--custom]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from ingest import CHILD  # the same child as bench/ingest.py's: seconds, CPU and peak RSS of one ingest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests/data/samples/bundle-echo/loadgen/k6-iter3.json.gz"


def write_bundle(folder: Path, requests: int, custom: bool) -> None:
    lines = gzip.decompress(SAMPLE.read_bytes()).splitlines(keepends=True)
    declared = [line for line in lines if b'"Metric"' in line]
    points = [line for line in lines if b'"Point"' in line]
    per_copy = sum(b'"http_req_duration"' in line for line in points)
    duration = [json.loads(line) for line in points if b'"http_req_duration"' in line]
    with gzip.open(folder / "k6.json.gz", "wb", compresslevel=1) as out:
        out.writelines(declared)
        if custom:
            out.write(b'{"type":"Metric","data":{"name":"my_trend","type":"trend","contains":"time"},"metric":"my_trend"}\n')
        block = b"".join(points)
        if custom:
            block += b"".join(json.dumps({"type": "Point", "metric": "my_trend", "data": {
                "time": point["data"]["time"], "value": point["data"]["value"], "tags": {"name": "x"}}}).encode() + b"\n"
                for point in duration)
        for _ in range(max(1, requests // per_copy)):
            out.write(block)
    times = sorted(point["data"]["time"] for point in duration)
    manifest = {
        "format": 1, "run_id": "bench-k6", "campaign": "bench", "timezone": "UTC",
        "iterations": [{"index": 1, "start": times[0][:19] + "Z", "end": "2026-12-02T09:48:00Z"}],
        "sources": [{"kind": "k6_json", "host": "loadgen", "path": "k6.json.gz", "iteration": 1}],
    }
    (folder / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500_000)
    parser.add_argument("--custom", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="perfcampaign-k6-"))
    try:
        write_bundle(folder, args.requests, args.custom)
        done = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(folder / "w.duckdb")],
                              capture_output=True, text=True, cwd=ROOT, check=False)
        if done.returncode != 0:
            raise SystemExit(f"ingest failed:\n{done.stderr[-3000:]}")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        size = (folder / "k6.json.gz").stat().st_size / 1e6
        print(f"k6 json, ~{args.requests:,} requests ({size:,.0f} MB gz){', a custom metric' if args.custom else ''}: "
              f"{figures['s']:.1f} s ({figures['cpu_s']:.1f} s CPU), peak RSS {figures['rss_mb']:,.0f} MB", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
