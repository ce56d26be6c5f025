"""History speed on a large campaign: analysis of 1,000 runs x 300 series, and the `history` and `changes`
commands on that warehouse. Targets: analysis < 10 s, each command < 1 s.

The echo sample bundle is ingested once (so every table exists as the code makes it); then 1,000 nightly
runs of one campaign are written straight into `runs` and `series_values` with SQL: 2 sides x 5 hosts x
3 iterations x 10 metrics = 300 series, 3 % noise, and a 15 % shift in a third of the series every 250 runs,
seeded (DuckDB's `setseed`, the insert on one thread) so that every run writes the same history.
Prints the seconds of each step, and the change points found against the shifts put in.

    .venv/bin/python bench/history.py [--runs 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tasks.history.analysis import analyse_campaign  # noqa: E402
from tasks.warehouse.connection import open_warehouse  # noqa: E402
from tasks.warehouse.ingest import ingest_bundle  # noqa: E402

METRICS = ["calls_per_s", "error_rate", "avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms", "cpu_busy_pct",
           "gc_overhead_pct"]
SHIFT_EVERY = 250

SYNTHETIC = """
set threads = 1;
select setseed(0.5);
insert into runs by name
select 'bench-' || lpad(i::varchar, 4, '0') as run_id, 'bench' as campaign, 'nightly' as scenario,
    map(['sut_version'], ['1.' || (i // $every)]) as labels, 'completed' as status,
    timestamptz '2024-01-01 02:00:00+00' + to_days(i::integer) as started_at,
    timestamptz '2024-01-01 02:30:00+00' + to_days(i::integer) as ended_at, '{}'::json as manifest
from range($runs) as r(i);

insert into series_values by name
with keys as (
    select side, 'host' || h as host, it as iteration, metric, row_number() over () as n
    from (values ('server'), ('client')) s(side), range(5) h(h), range(1, 4) i(it), unnest($metrics) m(metric)
),
points as (
    select keys.*, i,
        -- a 15 % shift every SHIFT_EVERY runs in every third series, and 3 % noise (12 uniforms - 6)
        100.0 * (1 + 0.15 * (keys.n % 3 = 0)::int * (i // $every))
            * (1 + 0.03 * (random() + random() + random() + random() + random() + random() + random() + random()
                           + random() + random() + random() + random() - 6)) as value
    from keys, range($runs) as r(i)
)
select 'bench' as campaign, 'nightly' as scenario, 'p1' as plan_id, '1:vus=10 2:vus=20 3:vus=40' as plan,
    side, host, iteration, '(all)' as label, metric, 'bench-' || lpad(i::varchar, 4, '0') as run_id,
    timestamptz '2024-01-01 02:00:00+00' + to_days(i::integer) as run_started_at, value, 1000 as calls,
    map(['sut_version'], ['1.' || (i // $every)]) as labels
from points;
"""

# The shifts put in, told from the values (a shifted series' last SHIFT_EVERY runs are 1.15^k its first's, the noise
# 3 %), against the change points: each shift found once, every other change counted as other.
SCORE = """
with values as (
    select side, host, iteration, metric, substr(run_id, 7)::int as run, value from series_values where campaign = 'bench'
),
last_shift as (
    select max(run) // $every * $every as run from values
),
shifted as (
    select side, host, iteration, metric
    from values group by all
    having avg(value) filter (where run >= (select run from last_shift))
           > 1.1 * avg(value) filter (where run < $every)
),
shifts as (
    select shifted.*, k * $every as run
    from shifted, range(1, (select run from last_shift) // $every + 1) as r(k)
),
changes as (
    select side, host, iteration, metric, substr(run_id, 7)::int as run
    from change_points where campaign = 'bench' and kind = 'change'
),
hits as (
    select s.*, c.run as change_run from shifts s join changes c using (side, host, iteration, metric)
    where abs(c.run - s.run) <= 1
)
select
    (select count(distinct (side, host, iteration, metric, run)) from hits),
    (select count(*) from shifts),
    (select count(*) from changes c where not exists (
        select 1 from hits h where (h.side, h.host, h.iteration, h.metric, h.change_run)
                                   = (c.side, c.host, c.iteration, c.metric, c.run)))
"""


def _cli(warehouse: Path, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from tasks.cli.main import main; main()", *args, "-w", str(warehouse)],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="build the warehouse in this folder and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-history-"))
    work.mkdir(parents=True, exist_ok=True)
    warehouse = work / "history.duckdb"
    warehouse.unlink(missing_ok=True)
    ingest_bundle(ROOT / "tests" / "data" / "samples" / "bundle-echo", warehouse, progress=lambda message: None)
    started = time.perf_counter()
    with open_warehouse(warehouse, write=True) as con:
        for statement in filter(str.strip, SYNTHETIC.split(";")):
            con.execute(statement, {k: v for k, v in {"runs": args.runs, "every": SHIFT_EVERY, "metrics": METRICS}.items()
                                    if f"${k}" in statement})
        points = con.execute("select count(*), count(distinct (side, host, iteration, metric)) from series "
                             "where campaign = 'bench'").fetchone()
    print(f"synthetic history: {points[0]:,} points in {points[1]} series, {time.perf_counter() - started:.1f} s")
    with open_warehouse(warehouse, write=True) as con:
        started = time.perf_counter()
        outcome = analyse_campaign(con, "bench", f"bench-{args.runs - 1:04d}")
        analysis = time.perf_counter() - started
        found = con.execute(SCORE, {"every": SHIFT_EVERY}).fetchone()
    print(f"analysis: {analysis:.2f} s (target < 10 s); {outcome.line()}")
    print(f"  shifts found (a change at the run +-1 in a series that shifted): {found[0]} of {found[1]}; "
          f"other changes: {found[2]}")
    commands = [
        ["history", "bench", "--side", "server", "--host", "host1", "--iteration", "3", "--metric", "p95_ms"],
        ["history", "bench", "--metric", "p95_ms"],
        ["history", "bench", "-f", "csv"],
        ["changes", "--campaign", "bench"],
        ["changes", "--status", "new", "-f", "json"],
    ]
    print("  in the process / whole command (with the interpreter's start-up):")
    for command in commands:
        print(f"  {_in_process(warehouse, command):5.2f} s / {_cli(warehouse, *command):5.2f} s  "
              f"perfcampaign {' '.join(command)}")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import tasks.cli.main"], check=True, cwd=ROOT)
    print(f"  start-up alone (python -c 'import tasks.cli.main'): {time.perf_counter() - started:.2f} s")
    if not args.keep:
        shutil.rmtree(work)


def _in_process(warehouse: Path, command: list[str]) -> float:
    """The command's own work: run through typer in this process, its imports already loaded."""
    from typer.testing import CliRunner

    from tasks.cli.main import app

    started = time.perf_counter()
    result = CliRunner().invoke(app, [*command, "-w", str(warehouse)])
    if result.exit_code != 0:
        raise SystemExit(f"perfcampaign {' '.join(command)}: exit {result.exit_code}: {result.output[-500:]}")
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
