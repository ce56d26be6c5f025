"""Nightly histories written as series values directly (no bundle, no ingest: a campaign in milliseconds), with
the truth they were written with, and the score of a detection against it.

`sixty_nights` is a history like the one of issue 21: 60 nights, a client and a server side, 3 labels (C with
a quarter of A's calls) and `(all)`, 4 iterations, run-to-run noise per series (p50 1.5-2.5 %, p95 2.4-4 %, or
`noise` for both) and 1 % shared by every series of a night, errors at 0.2 % counted on the calls (binomial), a
failed night and an excluded night (in no series), a one-night outlier (x 1.5 on every latency), a load-plan
change (plan A to night 51, plan B after), a 10-night drift, and the shifts of SHIFTS, two of them small and on one
label only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tasks.history.changepoints import ChangeSettings
from tasks.history.pooled import find_changes
from tasks.history.series import Series

SIDES = ("server", "client")
ITERATIONS = (1, 2, 3, 4)
SHARE = {"A": 4 / 9, "B": 4 / 9, "C": 1 / 9}  # of the calls of an iteration
CALLS = {1: 450, 2: 1350, 3: 4050, 4: 5400}  # calls of an iteration, all labels
COUNTED = ("p50_ms", "p95_ms", "calls_per_s", "error_rate")  # the metrics whose shifts are scored
FAILED, OUTLIER, EXCLUDED, PLAN_B = 19, 12, 33, 52
DRIFT = (42, 52)  # server p95 of iterations 3 and 4 rises 1.5 % a night over these nights


@dataclass(frozen=True)
class Shift:
    night: int
    factor: float
    metrics: tuple[str, ...]
    labels: tuple[str, ...] = ("A", "B", "C")
    iterations: tuple[int, ...] = ITERATIONS
    sides: tuple[str, ...] = SIDES


LATENCY = ("p50_ms", "p95_ms", "max_ms")
SHIFTS = [  # about a week apart, as releases come: the small ones have 6-8 nights on each side in p95_ms
    Shift(8, 1.15, LATENCY, iterations=(3, 4)),  # a regression under load
    Shift(15, 0.88, LATENCY, labels=("A", "B"), iterations=(1,)),  # an improvement on 2 of 3 labels, iteration 1
    Shift(22, 1.06, LATENCY, labels=("B",)),  # small, one label
    Shift(29, 1.12, ("p95_ms", "max_ms")),  # a release slower in its tail
    Shift(36, 1.09, LATENCY, labels=("C",)),  # small, one label
    Shift(55, 0.85, ("calls_per_s",), iterations=(3, 4)),  # capacity, plan B
    Shift(55, 1.10, ("p50_ms",), iterations=(4,), sides=("server",)),  # plan B
]
ERRORS = (25, "A", 0.03)  # from this night, label A answers 3 % errors (0.2 % before)


@dataclass
class History:
    series: list[Series]
    nights: dict[str, list[int]] = field(default_factory=dict)  # plan -> its nights, in order
    moves: dict[tuple, dict[int, float]] = field(default_factory=dict)  # (plan, key) -> night -> true relative move


def _level(metric: str, side: str, label: str, iteration: int, night: int) -> float:
    """The true level of one (all-label-free) series on one night, before noise."""
    base = {"p50_ms": 20.0, "p95_ms": 60.0, "max_ms": 400.0}.get(metric, 1.0) * (1 + 0.3 * iteration)
    if side == "client":
        base += 2.0 if metric != "calls_per_s" else 0.0
    if metric == "calls_per_s":
        base = CALLS[iteration] * SHARE[label] / 300
    for shift in SHIFTS:
        if (night >= shift.night and metric in shift.metrics and label in shift.labels
                and iteration in shift.iterations and side in shift.sides and (night >= PLAN_B) == (shift.night >= PLAN_B)):
            base *= shift.factor
    if side == "server" and metric == "p95_ms" and iteration in (3, 4) and night < PLAN_B:
        base *= 1 + 0.015 * min(max(night - DRIFT[0] + 1, 0), DRIFT[1] - DRIFT[0])
    return base


def _error_rate(label: str, night: int) -> float:
    return ERRORS[2] if label == ERRORS[1] and night >= ERRORS[0] else 0.002


def sixty_nights(seed: int, noise: tuple[float, float] | None = None) -> History:
    """The 60-night history of the module docstring, its noise drawn from `seed`; `noise`: the range each p50 and p95
    series' relative noise is drawn from (e.g. (0.03, 0.05): issue 21's "3-5 %" on every latency series)."""
    rng = np.random.default_rng(seed)
    nights = [n for n in range(60) if n not in (FAILED, EXCLUDED)]
    plans = {"A": [n for n in nights if n < PLAN_B], "B": [n for n in nights if n >= PLAN_B]}
    shared = {side: 1 + 0.01 * rng.standard_normal(60) for side in SIDES}
    history = History([], plans)
    for plan, plan_nights in plans.items():
        for side in SIDES:
            for iteration in ITERATIONS:
                _add_iteration(history, rng, plan, plan_nights, side, iteration, shared[side][plan_nights], noise)
    return history


def _add_iteration(history: History, rng: np.random.Generator, plan: str, nights: list[int], side: str,
                   iteration: int, shared: np.ndarray, noise_range: tuple[float, float] | None) -> None:
    n = np.array(nights)
    calls = {label: np.full(n.size, CALLS[iteration] * share) for label, share in SHARE.items()}
    for metric in ("p50_ms", "p95_ms", "max_ms", "calls_per_s", "error_rate"):
        values, truth = {}, {}
        for label in SHARE:
            truth[label] = np.array([_level(metric, side, label, iteration, night) if metric != "error_rate"
                                     else _error_rate(label, night) for night in nights])
            if metric == "error_rate":
                # overdispersed: the night's rate varies 20 %, then the errors are counted on the calls
                rate = np.clip(truth[label] * (1 + 0.2 * rng.standard_normal(n.size)), 0, 1)
                values[label] = rng.binomial(calls[label].astype(int), rate) / calls[label]
            else:
                drawn = (rng.uniform(0.015, 0.025) * (1.6 if metric == "p95_ms" else 1) if noise_range is None
                         else rng.uniform(*noise_range))
                noise = {"max_ms": 0.2, "calls_per_s": 0.02}.get(metric, drawn)
                values[label] = truth[label] * shared * (1 + noise * rng.standard_normal(n.size))
                if metric != "calls_per_s":
                    values[label][n == OUTLIER] *= 1.5
        weights = {label: calls[label] / sum(calls.values()) for label in SHARE}
        if metric == "calls_per_s":
            values["(all)"], truth["(all)"] = sum(values.values()), sum(truth.values())
        else:
            values["(all)"] = sum(weights[label] * values[label] for label in SHARE)
            truth["(all)"] = sum(weights[label] * truth[label] for label in SHARE)
        for label in (*SHARE, "(all)"):
            key = {"scenario": "s", "plan_id": plan, "side": side, "host": "(all)", "iteration": iteration,
                   "label": label, "metric": metric}
            count = calls[label] if label in calls else sum(calls.values())
            history.series.append(Series(key, np.arange(n.size), values[label], count))
            moves = truth[label][1:] / np.maximum(truth[label][:-1], 1e-12) - 1
            history.moves[series_id(key)] = {nights[i + 1]: float(m) for i, m in enumerate(moves) if abs(m) > 1e-9}


def series_id(key: dict) -> tuple:
    """A series key as the scores and the truth name it: (plan, side, host, iteration, label, metric)."""
    return tuple(key[name] for name in ("plan_id", "side", "host", "iteration", "label", "metric"))


@dataclass
class Score:
    items: int = 0  # shifted series x night items (a true move of min_change_pct or more)
    found: int = 0  # of them with a change point at the night +-1, in the right direction
    false: list[tuple] = field(default_factory=list)  # change points at no move (a move under min_change_pct
    # or inside the drift is neither an item nor a false change)
    missed: list[tuple] = field(default_factory=list)


def score(history: History, found: list[tuple[Series, object, str]], min_change_pct: float = 5.0) -> Score:
    """Score change points (kind `change`, pending ones too) against the moves the history was written with.
    The drift counts as one item per series it moved, found by a change point inside it (+-1 night)."""
    result = Score()
    at: dict[tuple, list[tuple[int, float]]] = {}
    for s, change, _ in found:
        if change.kind == "change":
            night = history.nights[s.key["plan_id"]][change.index]
            at.setdefault(series_id(s.key), []).append((night, change.after_value - change.before_value))
    for s in history.series:
        key = series_id(s.key)
        if s.key["metric"] not in COUNTED:
            continue
        moves, hits = history.moves.get(key, {}), at.get(key, [])
        drift = [n for n in moves if DRIFT[0] <= n < DRIFT[1]]
        items = [([n], moves[n]) for n in moves if abs(moves[n]) * 100 >= min_change_pct and n not in drift]
        if drift:
            items.append((list(range(DRIFT[0] - 1, DRIFT[1] + 1)), 1.0))
        used = set()
        for nights, move in items:
            result.items += 1
            near = [h for h in hits if min(abs(h[0] - n) for n in nights) <= 1 and np.sign(h[1]) == np.sign(move)]
            if near:
                result.found += 1
                used.update(near)
            else:
                result.missed.append((key, nights[0]))
        small = {n for n in moves if n not in drift}
        near_small = lambda night: any(abs(night - n) <= 1 for n in small)
        in_drift = lambda night: drift and DRIFT[0] - 1 <= night <= DRIFT[1]
        result.false += [(key, h[0]) for h in hits if h not in used and not near_small(h[0]) and not in_drift(h[0])]
    return result


def detect_history(history: History, settings: ChangeSettings = ChangeSettings()) -> list[tuple]:
    """Every change point of the history, plan by plan, as the analysis finds them."""
    found = []
    for plan in history.nights:
        found += find_changes([s for s in history.series if s.key["plan_id"] == plan], settings)
    return found
