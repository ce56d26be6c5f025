"""Cut-line recovery speed: an access log of about 7 MB with 805 lines cut inside quotes (issue 14 item 9).

Each cut line opens a quote that would swallow the lines after it; the ingest finds them all in one scan and
reads the file once more without them. Prints the ingest's seconds, rows and rejected lines; the time should
grow with the file's size, not with size times the number of cut lines (it took 77 s before).

    .venv/bin/python bench/cut_lines.py [--lines 90000] [--cuts 805]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle


def access_log(lines: int, cuts: int) -> tuple[str, int]:
    """Tomcat common lines with `cuts` lines cut inside the request spread evenly; (text, good lines)."""
    every = max(1, lines // max(cuts, 1))
    out, good = [], 0
    for n in range(lines):
        out.append(f'10.0.{n % 200}.{n % 97} - - [02/Dec/2026:15:{n // 60 % 60:02d}:{n % 60:02d} +0000] '
                   f'"GET /api/v1/item/{n % 50}?session={n % 1000} HTTP/1.1" 200 {200 + n % 4000} {1 + n % 250}')
        good += 1
        if n % every == every // 2 and len(out) - good < cuts:
            out.append(f'10.0.0.9 - - [02/Dec/2026:15:20:00 +0000] "GET /truncated/{n} HT')
    return "\n".join(out) + "\n", good


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=90_000)
    parser.add_argument("--cuts", type=int, default=805)
    args = parser.parse_args()
    text, good = access_log(args.lines, args.cuts)
    source = {"kind": "access_log", "host": "w", "path": "a.log", "preset": "tomcat_common_d", "duration_unit": "ms",
              "max_rejected_pct": 100}
    window = [{"index": 1, "start": "2026-12-02T00:00:00Z", "end": "2026-12-03T00:00:00Z"}]
    with tempfile.TemporaryDirectory(prefix="perfcampaign-cut-bench-") as folder:
        root = write_bundle(Path(folder) / "b", {"a.log": text}, [source], window)
        started = time.perf_counter()
        report = ingest_bundle(root, Path(folder) / "w.duckdb", progress=lambda message: None)
        seconds = time.perf_counter() - started
    result = report.sources[0]
    print(f"{len(text) / 1e6:.1f} MB, {good:,} whole lines, {args.cuts} cut lines: ingest {seconds:.2f} s, "
          f"{result.rows:,} rows, {result.rejected} rejected")


if __name__ == "__main__":
    main()
