"""Compare two runs' hosts and JVMs: per iteration (matched by index) and host, the highest CPU, heap and thread
count, and their means, A against B, with the rules of `compare` where the samples allow a test.

The figures come from `sql/reports/compare_hosts.sql`. A highest value is one sample: no test, as `max_ms`
(`test` "none"). A mean is tested as `avg_ms` is: Welch's t-test on the samples of each side, at least
`MIN_SAMPLES_BEYOND` of them on each ("too few samples" otherwise). Higher is worse for all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np

from tasks.report.compare import MIN_SAMPLES_BEYOND, direction_of, mean_test
from tasks.settings import COMPARE_ALPHA as ALPHA
from tasks.warehouse.models import model_sql

UNITS = {"cpu_busy_pct": "%", "heap_used_kb": "kb", "threads": "count"}


@dataclass
class HostChange:
    """One figure of one iteration and host in A and in B (`statistic` max or avg), and the test of the change."""

    iteration: int
    host: str
    metric: str  # cpu_busy_max_pct, cpu_busy_avg_pct, heap_used_max_kb, heap_used_avg_kb, threads_max, threads_avg
    a: float | None
    b: float | None
    change_pct: float | None
    samples_a: int
    samples_b: int
    test: str
    p_value: float | None
    beyond_noise: bool | None
    direction: str  # worse, better, same (within noise), or n/a


def _name(figure: str, statistic: str) -> str:
    """`cpu_busy_pct` + max -> `cpu_busy_max_pct`: the unit stays last, as in the marts' names."""
    for unit in ("_pct", "_kb"):
        if figure.endswith(unit):
            return f"{figure.removesuffix(unit)}_{statistic}{unit}"
    return f"{figure}_{statistic}"


def _change(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or a == 0 else 100 * (b / a - 1)


def compare_hosts(con: duckdb.DuckDBPyConnection, run_a: str, run_b: str, alpha: float = ALPHA) -> list[HostChange]:
    """Every host figure of every matched iteration of A and B: highest value (no test) and mean (Welch)."""
    cursor = con.execute(model_sql("reports/compare_hosts"), {"run_a": run_a, "run_b": run_b})
    columns = [d[0] for d in cursor.description]
    changes = []
    for values in cursor.fetchall():
        row = dict(zip(columns, values))
        a_samples = np.asarray([v for v in row["a_samples"] if v is not None], dtype=float)
        b_samples = np.asarray([v for v in row["b_samples"] if v is not None], dtype=float)
        for statistic in ("max", "avg"):
            a, b = row[f"a_{statistic}"], row[f"b_{statistic}"]
            test, p_value, beyond, low, high = "none", None, None, None, None
            if statistic == "avg" and a is not None and b is not None:
                if min(len(a_samples), len(b_samples)) < MIN_SAMPLES_BEYOND:
                    test = "too few samples"
                else:
                    test = "welch t"
                    p_value, low, high, beyond = mean_test(a_samples, b_samples, alpha)
            changes.append(HostChange(
                row["iteration"], row["host"], _name(row["figure"], statistic), a, b, _change(a, b),
                len(a_samples), len(b_samples), test, p_value, beyond,
                direction_of(row["figure"], a, b, beyond, low, high),
            ))
    return changes
