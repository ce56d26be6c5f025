"""The nightly history the history tests share (tests/history_nights.py): its truth and how to query it.

32 nights of one campaign (3 iterations, two access logs and a client JTL, 3 % run-to-run noise):
latency +20 % on both sides at night 10, a one-night outlier (x 1.6) at 14, capacity -20 % at 18, a failed
run (x 2, started with another load in iteration 3: a plan no other run has) at 21, server latency -15 % at 24, client errors 1 % -> 5 % at 27, and from night 29 another load
in iteration 3 (another plan, 3 runs: too few to claim anything). Night 6 lost the client's results of
iteration 2 (its JTL has iterations 1 and 3 only). The warehouse itself is the fixture
`warehouse` of conftest.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tasks.warehouse.connection import open_warehouse
from tests.history_nights import LATENCY_METRICS, Night

NIGHTS = 32
ROOT = Path(__file__).resolve().parents[3]

SHIFTS = [  # (night, side, metrics, direction)
    (10, "server", LATENCY_METRICS, "regression"), (10, "client", LATENCY_METRICS, "regression"),
    (18, "server", ("calls_per_s",), "regression"), (18, "client", ("calls_per_s",), "regression"),
    (24, "server", LATENCY_METRICS, "improvement"),
    (27, "client", ("error_rate",), "regression"),
]
OUTLIER, FAILED, NEW_PLAN = 14, 21, 29
NO_CLIENT_2 = 6  # the night without the client's iteration 2


def night(n: int) -> Night:
    """The true levels of night n."""
    latency = {"server": 1.0, "client": 1.0}
    capacity, errors, version = 1.0, 0.01, "1.0.0"
    if n >= 10:
        latency, version = {"server": 1.2, "client": 1.2}, "1.1.0"
    if n >= 18:
        capacity, version = 0.8, "1.2.0"
    if n >= 24:
        latency, version = {"server": 1.2 * 0.85, "client": 1.2}, "1.3.0"
    if n >= 27:
        errors, version = 0.05, "1.4.0"
    if n in (OUTLIER, FAILED):
        latency = {side: level * (1.6 if n == OUTLIER else 2.0) for side, level in latency.items()}
    return Night(latency=latency, capacity={"server": capacity, "client": capacity},
                 errors={"server": 0.01, "client": errors}, status="failed" if n == FAILED else "completed",
                 vus_3=24 if n >= NEW_PLAN else 30 if n == FAILED else 18, version=version,
                 client_iterations=(1, 3) if n == NO_CLIENT_2 else (1, 2, 3))


def run_id(n: int) -> str:
    return f"nightly-{n:03d}"


def query(path: Path | str, sql: str, params: dict | None = None) -> list[tuple]:
    with open_warehouse(path) as con:
        return con.execute(sql, params).fetchall()


def main_plan_series(path: Path) -> dict[tuple, list[str]]:
    """Series key -> its runs in order, for the plan of the first night."""
    rows = query(path, "select side, host, iteration, label, metric, list(run_id order by run_started_at) from series "
                       "where plan_id = (select plan_id from series where run_id = 'nightly-000' limit 1) group by all")
    return {row[:5]: row[5] for row in rows}


def command(path: Path, *args: str) -> subprocess.CompletedProcess:
    """`perfcampaign ARGS -w PATH` as a user runs it: another process."""
    return subprocess.run([sys.executable, "-c", "from tasks.cli.main import main; main()", *args, "-w", str(path)],
                          capture_output=True, text=True, cwd=ROOT)


def cli(path: Path, *args: str):
    """The same command run in this process (typer's runner): returncode, stdout and stderr as `command` has."""
    from typer.testing import CliRunner

    from tasks.cli.main import app

    result = CliRunner().invoke(app, [*args, "-w", str(path)])
    result.returncode = result.exit_code
    return result
