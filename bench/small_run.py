"""What one small run costs after its last iteration: ingest, validation and report of the real echo bundle.

The echo bundle (tests/data/samples/bundle-echo: two access logs, two jstat and two vmstat logs, k6 JSON and
summaries of 3 iterations, ~20 k rows) is ingested into a warehouse that already holds it, validated with
Great Expectations and reported, `--repeat` times in this process after one warm-up of each (imports,
schema). Prints the median wall time and CPU time (user + system of this process) of each step: on a shared
machine the CPU time is the figure to compare.

    .venv/bin/python bench/small_run.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tasks.report.build import build_report  # noqa: E402
from tasks.validate.run import validate_run  # noqa: E402
from tasks.warehouse.ingest import ingest_bundle  # noqa: E402

BUNDLE = ROOT / "tests" / "data" / "samples" / "bundle-echo"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(work) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), _cpu()
    work()
    return time.perf_counter() - wall, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perfcampaign-bench-") as folder:
        warehouse = Path(folder) / "w.duckdb"
        run_id = ingest_bundle(BUNDLE, warehouse, progress=lambda message: None).run_id
        steps = {
            "ingest": lambda: ingest_bundle(BUNDLE, warehouse, progress=lambda message: None),
            "validate (Great Expectations)": lambda: validate_run(warehouse, run_id),
            "report (HTML, charts)": lambda: build_report(warehouse, run_id, Path(folder) / "report"),
        }
        print(f"{'step':<32}{'wall s':>8}{'CPU s':>8}   (median of {args.repeat}, after one warm-up)")
        for name, work in steps.items():
            work()
            walls, cpus = zip(*(_timed(work) for _ in range(args.repeat)))
            print(f"{name:<32}{statistics.median(walls):>8.2f}{statistics.median(cpus):>8.2f}")


if __name__ == "__main__":
    main()
