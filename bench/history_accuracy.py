"""Accuracy and speed of the nightly change-point detection (`tasks/history/changepoints.py`).

Acceptance data, synthetic and seeded: a few dozen nightly runs of one campaign (3 iterations, server and
client side, six metrics: 36 series), 1.5-3 % of multiplicative gaussian run-to-run noise per series, and
at random runs: a latency regression (+10-25 % on p95, p99 of iterations 2 and 3, both sides), a latency
improvement (-10-25 % on p50 and avg, client side), a capacity drop (-10-25 % calls/s, iteration 3), errors
appearing (error rate 0 -> 0.5-2 %, iteration 2) and one one-night outlier (x1.5-2 on one latency series).
Targets: at least 90 % of the shifted (series, run) pairs found at the right run +-1, at most 1 false
change point and at most 1 false outlier per campaign, the outlier reported once, as an outlier. Then a
timing run, 300 series x 1000 runs (each with three 10-25 % shifts and an outlier): under 5 s.
Prints one line per seed, the worst of them (each count at its worst seed), and the timing run.

    .venv/bin/python bench/history_accuracy.py [--seeds 50] [--runs 40]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tasks.history.changepoints import detect

ITERATIONS = (1, 2, 3)
SIDES = ("server", "client")
LATENCY = {"p50_ms": 1.0, "p95_ms": 2.5, "p99_ms": 4.0, "avg_ms": 1.3}  # times the iteration's p50


@dataclass
class Series:
    level: np.ndarray  # the true level per run, before noise
    noise: float
    shifts: set[int] = field(default_factory=set)
    outliers: set[int] = field(default_factory=set)

    def shift(self, run: int, factor: float) -> None:
        self.level[run:] *= factor
        self.shifts.add(run)


@dataclass
class Score:
    shifted: int = 0
    found: int = 0
    false_changes: int = 0
    outliers: int = 0
    outliers_found: int = 0
    false_outliers: int = 0
    seconds: float = 0.0

    @property
    def recall(self) -> float:
        return self.found / self.shifted if self.shifted else 1.0


def campaign(rng: np.random.Generator, runs: int) -> list[Series]:
    """One campaign's nightly series, with the shifts and the outlier described in the module docstring."""
    series = {}
    for it in ITERATIONS:
        for side in SIDES:
            base = {m: 20.0 * it * k + (2.0 if side == "client" else 0.0) for m, k in LATENCY.items()}
            base["calls_per_s"] = 100.0 * it
            base["error_rate"] = 0.002 if it == 3 else 0.0  # only the heaviest load has errors
            for metric, value in base.items():
                noise = 0.3 if metric == "error_rate" else rng.uniform(0.015, 0.03)  # errors are far noisier
                series[it, side, metric] = Series(np.full(runs, value), noise)
    regression, improvement, capacity, errors = rng.choice(np.arange(5, runs - 4), size=4, replace=False)
    factor = lambda sign: 1 + sign * rng.uniform(0.10, 0.25)
    for key, s in series.items():
        it, side, metric = key
        if it in (2, 3) and metric in ("p95_ms", "p99_ms"):
            s.shift(regression, factor(+1))
        if side == "client" and metric in ("p50_ms", "avg_ms"):
            s.shift(improvement, factor(-1))
        if it == 3 and metric == "calls_per_s":
            s.shift(capacity, factor(-1))
        if it == 2 and metric == "error_rate":
            s.level[errors:] = rng.uniform(0.005, 0.02)
            s.shifts.add(errors)
    _add_outlier(rng, [s for (_, _, m), s in series.items() if m in LATENCY])
    return list(series.values())


def _add_outlier(rng: np.random.Generator, candidates: list[Series]) -> None:
    """One night, on one latency series, x1.5-2, at least 3 runs from its ends and from its shifts."""
    s = candidates[rng.integers(len(candidates))]
    runs = [r for r in range(3, len(s.level) - 3) if all(abs(r - t) > 3 for t in s.shifts)]
    run = int(rng.choice(runs))
    s.level[run] *= rng.uniform(1.5, 2.0)
    s.outliers.add(run)


def observe(rng: np.random.Generator, s: Series) -> np.ndarray:
    return s.level * (1 + s.noise * rng.standard_normal(s.level.size))


def score(rng: np.random.Generator, all_series: list[Series]) -> Score:
    observed = [observe(rng, s) for s in all_series]
    started = time.perf_counter()
    reports = [detect(values) for values in observed]
    result = Score(seconds=time.perf_counter() - started)
    for s, changes in zip(all_series, reports):
        at = {c.index for c in changes if c.kind == "change"}
        found = _matched(s.shifts, at)
        outliers = {c.index for c in changes if c.kind == "outlier"}
        result.shifted += len(s.shifts)
        result.found += found
        result.false_changes += len(at) - found
        result.outliers += len(s.outliers)
        result.outliers_found += len(outliers & s.outliers)
        result.false_outliers += len(outliers - s.outliers)
    return result


def _matched(shifts: set[int], at: set[int]) -> int:
    """Shifts found at their run +-1, each by its own change: a second change next to a shift is false."""
    free = set(at)
    for t in sorted(shifts):
        near = sorted(free & {t - 1, t, t + 1}, key=lambda i: abs(i - t))
        if near:
            free.remove(near[0])
    return len(at) - len(free)


def long_histories(rng: np.random.Generator, count: int, runs: int) -> list[Series]:
    """`count` series of `runs` nights, each with 3 shifts of 10-25 % and one outlier, for the timing."""
    histories = []
    for _ in range(count):
        s = Series(np.full(runs, 100.0), rng.uniform(0.015, 0.03))
        for run in np.sort(rng.choice(np.arange(10, runs - 10, 20), size=3, replace=False)):
            s.shift(int(run), 1 + rng.choice([-1, 1]) * rng.uniform(0.10, 0.25))
        _add_outlier(rng, [s])
        histories.append(s)
    return histories


def line(label: str, r: Score) -> str:
    return (
        f"{label:>9}  found {r.found:3d}/{r.shifted:<3d} ({r.recall:6.1%})  false changes {r.false_changes}"
        f"  outliers as outliers {r.outliers_found}/{r.outliers}  false outliers {r.false_outliers}"
        f"  {r.seconds * 1000:7.1f} ms"
    )


def worst(results: list[Score]) -> Score:
    """Each count at its worst seed (so not one seed's line)."""
    least = min(results, key=lambda r: r.recall)
    return Score(
        shifted=least.shifted,
        found=least.found,
        false_changes=max(r.false_changes for r in results),
        outliers=min(results, key=lambda r: r.outliers_found).outliers,
        outliers_found=min(r.outliers_found for r in results),
        false_outliers=max(r.false_outliers for r in results),
        seconds=max(r.seconds for r in results),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--runs", type=int, default=40, help="nightly runs per campaign")
    args = parser.parse_args()

    results = []
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        results.append(score(rng, campaign(rng, args.runs)))
        print(line(f"seed {seed}", results[-1]))
    bad = worst(results)
    print(line("worst", bad))

    rng = np.random.default_rng(20261202)
    timing = score(rng, long_histories(rng, 300, 1000))
    print(line("300x1000", timing))
    met = bad.recall >= 0.9 and bad.false_changes <= 1 and bad.false_outliers <= 1
    met = met and bad.outliers_found == bad.outliers and timing.seconds < 5
    print("targets met" if met else "TARGETS MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
