"""Wall time of the `perfcampaign` commands a person types, on a warehouse of a few dozen nightly runs.

The warehouse is the nightly history the history tests use (tests/unit/history/nightly.py: 32 nights of
one campaign written from the real echo bundle, two access logs and a client JTL, 3 iterations, its shifts,
outlier, failed run and plan change), ingested and analysed once. Then each command is run as a user runs
it, a new process each time (`python -c 'from tasks.cli.main import main; main()' ...`), and the median of
`--repeat` runs printed, with the heavy modules the command loaded and the import time of the CLI module.
Target (issue 10): `history` and `changes` under 1 s end to end. Also prints the events found.

    .venv/bin/python bench/cli.py [--repeat 5] [--keep DIR] [--code CHECKOUT]

`--code`: run the commands of another checkout (e.g. the main branch's, to compare on the same warehouse
and machine load); the warehouse is always written by this one's code.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tasks.history.analysis import analyse_run
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.history_nights import write_night
from tests.unit.history.nightly import NIGHTS, night, run_id

HEAVY = ("pandas", "numpy", "scipy", "pydantic", "matplotlib", "prefect", "great_expectations", "rich")
# runs the command, then says on stderr which heavy modules it had loaded
PROBE = ("import sys\nfrom tasks.cli.main import main\ntry:\n    main()\nfinally:\n"
         f"    print('loaded:', ','.join(m for m in {HEAVY!r} if m in sys.modules) or '-', file=sys.stderr)")


def _warehouse(work: Path) -> Path:
    path = work / "nightly.duckdb"
    if path.exists():
        return path
    for n in range(NIGHTS):
        ingest_bundle(write_night(work, n, night(n)), path, progress=lambda message: None)
    analyse_run(path, run_id(NIGHTS - 1))
    return path


def _timed(args: list[str], repeat: int, code: Path) -> tuple[float, float, str]:
    """Median wall and CPU seconds (user + system of the process: on a shared machine the wall time is
    mostly other processes' turn), and the heavy modules loaded."""
    seconds, cpu, loaded = [], [], ""
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=code, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(code)}, check=False)  # exit 3 is an answer
        seconds.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode not in (0, 3):
            raise SystemExit(f"perfcampaign {' '.join(args)}: exit {done.returncode}: {done.stderr[-500:]}")
        loaded = re.findall(r"^loaded: (.*)$", done.stderr, re.MULTILINE)[-1]
    return statistics.median(seconds), statistics.median(cpu), loaded


def _import_ms(code: Path) -> float:
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import tasks.cli.main"], cwd=code,
                          capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(code)})
    return int(done.stderr.strip().splitlines()[-1].split("|")[1]) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the warehouse in this folder and keep it (reused when there)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose commands to time")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-cli-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    warehouse = _warehouse(work)
    print(f"warehouse: {NIGHTS} nightly runs, ready in {time.perf_counter() - started:.1f} s")
    with open_warehouse(warehouse) as con:
        points, changes, events = con.execute(
            "select (select count(*) from series), (select count(*) from change_points), "
            "(select count(*) from change_events)").fetchone()
        kinds = con.execute("select kind, direction, run_id, series, metrics from change_events "
                            "order by run_started_at").fetchall()
    print(f"history: {points:,} points, {changes} change points and outliers in {events} events:")
    for kind, direction, at, series, metrics in kinds:
        print(f"  {at}: {kind} ({direction}), {series} series: {metrics}")
    w = ["-w", str(warehouse)]
    commands = [
        ["--help"],
        ["runs", *w],
        ["show", run_id(NIGHTS - 1), *w],
        ["history", "nightly", "--side", "server", "--host", "(all)", "--iteration", "3", "--metric", "p95_ms", *w],
        ["history", "nightly", "--metric", "p95_ms", *w],
        ["history", "nightly", "-f", "csv", *w],
        ["changes", "--campaign", "nightly", *w],
        ["changes", "--campaign", "nightly", "--status", "new", "--fail-on", "regression", "-f", "json", *w],
    ]
    if (Path(args.code) / "sql" / "marts" / "change_events.sql").exists():  # a checkout with events
        commands.append(["changes", "--series", *w])
    print(f"commands of {args.code.resolve()}; import tasks.cli.main: {_import_ms(args.code):.0f} ms (-X importtime)")
    print(f"median of {args.repeat} runs, a new process each (target for history and changes: < 1 s); wall / CPU:")
    for command in commands:
        seconds, cpu, loaded = _timed(command, args.repeat, args.code)
        shown = " ".join(part if part != str(warehouse) else "W" for part in command)
        print(f"  {seconds:5.2f} s / {cpu:5.2f} s  perfcampaign {shown}   [loaded: {loaded}]")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
