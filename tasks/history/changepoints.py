"""Change points in one nightly series: the runs where a metric's level moved, and one-night outliers.

The method is Apache Otava's (formerly Hunter; Fleming et al. 2023, "Hunter: Using Change Point Detection
to Hunt for Performance Regressions"): E-divisive means (`edivisive.py`), with Student's t-test between the
two segments beside a candidate in place of the paper's permutation test (much faster, and it works on
the short segments a nightly history has), run over sliding windows so a long history stays fast and a
small shift is not drowned by a long one. The windows find "weak" change points at a relaxed p-value; a
merge step then drops them one at a time, weakest first, and retests its neighbours on the joined segment.

Where this differs from Otava, and why:
- One-night outliers are taken out first (`outlier_mask`) and reported apart: left in, E-divisive would
  report a change up and one back down, and their spread would hide real changes from the t-test. A rate's
  night is taken out only when the count test finds it out of line with its neighbours (`_counted_outliers`).
- A single run between two changes is never a level (`_weakest`): the same up-and-down for a night that
  the outlier rule let through. Up to EPISODE_RUNS runs that end where they began are outliers (`_episodes`).
- Sizes are relative changes of segment medians, not means: one night does not move a median.
- After the merge, each change is placed where its two segments fit best (least squares, up to PLACE_RUNS runs
  away) and the split step looks again inside every segment (`_search`): E-divisive placed a small shift 2-3 runs
  off, and took two shifts a week apart as one between them.
- p_value defaults to 1e-4, not 0.001: the t-test is asked about the best split of all, so its p-value
  is optimistic. At 0.001 a campaign of 36 series of 40 nights got up to 2 false changes
  (`bench/history_accuracy.py`), at 1e-4 none. The price is paid on the newest nights: a 15 % shift
  over 3 % noise is found 94 times in 100 after two nights (97 at 0.001), 71 after one (85).
- A pending change (fewer than `settle_runs` runs on a side) is kept only at p_value x PENDING_P: its test rests
  on one or two nights, and a last night's outlier is no different from a change. The same 15 % shift, 40 nights,
  100 seeds (2026-12-05): at its run after one night 55 times (74 without), after two 91 (94), after three 96 (96).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tasks.bundle.manifest import HistoryOptions
from tasks.history.edivisive import bisect
from tasks.history.significance import count_p, student_p, successive_overdispersion

NEIGHBOURS = 3  # points on each side that an outlier is compared with
PLACE_CHI2 = 3.84  # a step at one run fits significantly better than at another (chi-square, 1 df, 5 %): `step_preference`
PLACE_RUNS = 3  # a change is moved to the best split of its two segments up to this many runs away
SEARCH_ROUNDS = 3  # rounds of placing the changes and looking again inside their segments
OUTLIER_NOISE = 6.0  # an outlier is this many times the series' noise away from both sides
PENDING_P = 0.1  # x p_value: a pending change (a side of one or two runs) is kept at this much stricter p
EPISODE_RUNS = 3  # a level this short between two opposite changes, back where it was, is an episode (`_episodes`)


_DEFAULTS = HistoryOptions()  # the defaults a campaign file and a manifest share


@dataclass(frozen=True)
class ChangeSettings:
    min_change_pct: float = _DEFAULTS.min_change_pct  # smaller moves of the level (between segment medians): none
    p_value: float = _DEFAULTS.p_value  # significance of the t-test (Otava's is 0.001; see the module docstring)
    min_runs: int = _DEFAULTS.min_runs  # a series with fewer points claims nothing
    settle_runs: int = _DEFAULTS.settle_runs  # fewer runs on a side of a change: it is pending
    alert_extremes: bool = _DEFAULTS.alert_extremes  # max_ms changes are shown, announced only when true
    window: int = 30  # points per sliding window of the split step

    def __post_init__(self) -> None:
        if self.window < 3:
            raise ValueError(f"window must be at least 3 points, got {self.window}")


@dataclass(frozen=True)
class Change:
    """One change point, or one outlier, of a series.

    index: position in the series given to `detect` of the first point at the new level (of the outlier).
    before_value: median of the segment before the change (for an outlier: of the segment around it).
    after_value: median of the segment after the change (for an outlier: its own value).
    change_pct: (after − before) / |before| × 100; None when before is 0 and after is not.
    p_value: Student's t-test of the two segments (for an outlier: of its value against its segment); for a
        rate given with its calls, the count test (significance.py).
    pending: fewer than `settle_runs` runs on a side of the change (after an outlier): not settled yet.
    """

    index: int
    kind: str  # "change" or "outlier"
    before_value: float
    after_value: float
    change_pct: float | None
    p_value: float
    pending: bool = False


@dataclass(frozen=True)
class _Points:
    """The points a test reads: values, and for a rate the calls behind each (None: a t-test of the values) and the
    least overdispersion its count tests assume (the series' night to night: `successive_overdispersion`; None when
    its nights have too few errors to estimate one)."""

    values: np.ndarray
    calls: np.ndarray | None
    floor: float | None = None

    def p(self, start: int, split: int, stop: int) -> float:
        """The test of values[start:split] against values[split:stop]."""
        if self.calls is None:
            return student_p(self.values[start:split], self.values[split:stop])
        return count_p(self.values[start:split], self.calls[start:split], self.values[split:stop],
                       self.calls[split:stop], self.floor)

    def take(self, mask: np.ndarray) -> _Points:
        return _Points(self.values[mask], None if self.calls is None else self.calls[mask], self.floor)


def detect(values: Sequence[float], settings: ChangeSettings = ChangeSettings(),
           calls: Sequence[float] | None = None, place: bool = True) -> list[Change]:
    """Change points and one-night outliers of a series ordered by run, sorted by index.

    NaN (and ±inf) points, runs without the metric, are skipped; indices still count them. With `calls`
    (the calls behind each point), the values are rates (error_rate) and are tested as counts; values outside
    0..1 are no proportion and get the t-test. `place`: changes are moved to where their segments fit best
    (`_placed`); a group's series (pooled.py) is not, as it holds shifts of a few members under its threshold
    that pull a least-squares split towards them.
    """
    x = np.asarray(values, dtype=float)
    present = np.flatnonzero(np.isfinite(x))
    if present.size < settings.min_runs:
        return []
    points = _present_points(x, present, calls)
    outlier = _outliers(points, settings)
    kept, clean = present[~outlier], points.take(~outlier)
    changes = _search(clean, settings, place)
    if (episode := _episodes(clean, changes, settings)).any():  # taken out as outliers are, and searched again
        outlier[np.flatnonzero(~outlier)[episode]] = True
        kept, clean = present[~outlier], points.take(~outlier)
        changes = _search(clean, settings, place)
    bounds = np.array([0, *(c.index for c in changes), clean.values.size])
    found = [replace(c, index=int(kept[c.index])) for c in changes]
    outliers = (_outlier_change(clean, bounds, kept, points.take(present == i), int(i), settings)
                for i in present[outlier])
    found += [o for o in outliers if _relevant(o, settings)]
    return sorted(found, key=lambda c: c.index)


def _episodes(points: _Points, changes: list[Change], settings: ChangeSettings) -> np.ndarray:
    """Mask of the runs of short episodes: a level of at most EPISODE_RUNS runs between two changes in opposite
    directions, the levels before and after it alike (no change of min_change_pct at p_value between them, each at
    least `settle_runs` runs). A stretch of bad nights that ends where it began is no regression and its undoing:
    its runs are taken out as outliers, each reported when it is one on its own terms (`_relevant`). Issue 21's kind
    of history, seeds 300-399: 17 of 136 false changes were such pairs, most of them error rates."""
    mask = np.zeros(points.values.size, dtype=bool)
    bounds = [0, *(c.index for c in changes), points.values.size]
    for i, (first, last) in enumerate(pairwise(changes)):
        start, stop = bounds[i], bounds[i + 3]
        if (last.index - first.index > EPISODE_RUNS or min(first.index - start, stop - last.index) < settings.settle_runs
                or (first.after_value - first.before_value) * (last.after_value - last.before_value) >= 0):
            continue
        outer = np.r_[start:first.index, last.index:stop]
        around = _Points(points.values[outer], None if points.calls is None else points.calls[outer], points.floor)
        joined = _change(around, 0, first.index - start, outer.size, settings)
        if joined.p_value > settings.p_value or _magnitude(joined) < settings.min_change_pct:
            mask[first.index:last.index] = True
    return mask


def outlier_mask(series: np.ndarray, settings: ChangeSettings) -> np.ndarray:
    """Mask of one-night outliers: points out of line with the runs on both sides, which agree on a level.

    With `limit` = the larger of OUTLIER_NOISE × the series' relative noise and min_change_pct, and m₋, m₊
    the medians of the NEIGHBOURS points before and after a point, it is an outlier when it is more than
    `limit` (relative) away from both m₋ and m₊, on the same side, while m₋ and m₊ are within `limit` of
    each other. A point the next runs follow is the first of a new level, and a point beside a change is
    not judged (its two sides disagree). The first and the last point never are outliers: one side is
    missing, and a last point off the line may be the start of a change.
    """
    n = series.size
    if n < 3:
        return np.zeros(n, dtype=bool)
    gaps = np.full(NEIGHBOURS, np.nan)
    windows = sliding_window_view(np.concatenate([gaps, series, gaps]), NEIGHBOURS)
    inner = series[1:-1]
    # windows[i] holds series[i - NEIGHBOURS : i]; windows[i + NEIGHBOURS + 1], the NEIGHBOURS after i.
    before = np.nanmedian(windows[1 : n - 1], axis=1)
    after = np.nanmedian(windows[NEIGHBOURS + 2 : NEIGHBOURS + n], axis=1)
    limit = max(OUTLIER_NOISE * relative_noise(series), settings.min_change_pct / 100)
    # Compared without dividing, so that a level of 0 makes any other value "infinitely" far.
    far = (np.abs(inner - before) > limit * np.abs(before)) & (np.abs(inner - after) > limit * np.abs(after))
    same_side = np.sign(inner - before) == np.sign(inner - after)
    one_level = np.abs(after - before) <= limit * np.minimum(np.abs(before), np.abs(after))
    return np.concatenate([[False], far & same_side & one_level, [False]])


def _present_points(x: np.ndarray, present: np.ndarray, calls: Sequence[float] | None) -> _Points:
    """The points of the values at `present`: counts when `calls` are given and every value is a proportion (0..1),
    with the least overdispersion their successive nights show; else values for the t-test."""
    proportions = calls is not None and bool(np.all((x[present] >= 0) & (x[present] <= 1)))
    counted = np.asarray(calls, dtype=float)[present] if proportions else None
    return _Points(x[present], counted, None if counted is None else successive_overdispersion(x[present], counted))


def _outliers(points: _Points, settings: ChangeSettings) -> np.ndarray:
    """Mask of the points' one-night outliers: `outlier_mask`'s, for counts only those the count test confirms."""
    outlier = outlier_mask(points.values, settings)
    return outlier if points.calls is None else _counted_outliers(points, outlier, settings)


def _counted_outliers(points: _Points, outlier: np.ndarray, settings: ChangeSettings) -> np.ndarray:
    """The outliers of a rate (`outlier_mask`'s) whose errors the count test also finds out of line with the
    NEIGHBOURS nights on each side (p <= p_value). Among nights at 0, one error in 200 calls is a low rate's noise:
    taken out, every such night before a shift would leave the level before it at 0, and a shift from 0 is certain
    to the count test, wherever it is put (issue 21's kind of history, 30 seeds: 4 of its 12 false changes of error
    rates, 2026-12-04)."""
    n = points.values.size
    kept = outlier.copy()
    for i in np.flatnonzero(outlier):
        around = np.r_[max(0, i - NEIGHBOURS) : i, i + 1 : min(n, i + NEIGHBOURS + 1)]
        kept[i] = count_p(points.values[around], points.calls[around], points.values[i : i + 1],
                          points.calls[i : i + 1], points.floor) <= settings.p_value
    return kept


def relative_noise(series: np.ndarray) -> float:
    """Run-to-run noise as a fraction of the level: robust (MAD) spread of successive relative differences.

    Relative, because the noise of performance metrics scales with their level (an error rate that goes
    from 0 to some errors gets noisy only then); differences, so a shift of level does not count as noise.
    """
    level = (np.abs(series[:-1]) + np.abs(series[1:])) / 2
    moving = level > 0  # two nights at 0 tell nothing of the relative noise
    steps = np.diff(series)[moving] / level[moving]
    if steps.size == 0:
        return 0.0
    return float(1.4826 * np.median(np.abs(steps - np.median(steps))) / np.sqrt(2))


def _weak_splits(points: _Points, settings: ChangeSettings, first: int = 0, size: int | None = None,
                 seen: dict[tuple[int, int], list[int]] | None = None) -> list[int]:
    """Split step over points[first:size]: E-divisive in windows of `window` points, half-overlapping, at a relaxed
    p-value. `seen`: the splits of each window (start, stop) already searched, which the same window gives again.

    As in Otava, a window starts at the last split found in the one before (or half a window on), so the
    level after a change is analysed apart from the one before it.
    """
    relaxed = min(10 * settings.p_value, max(settings.p_value, 0.5))  # Otava's weak points: 10 x p_value
    size = points.values.size if size is None else size
    seen = {} if seen is None else seen
    found: set[int] = set()
    start = first
    while True:
        stop = min(start + settings.window, size)
        if (start, stop) not in seen:
            significant = lambda a, tau, kappa, at=start: points.p(at + a, at + tau, at + kappa) <= relaxed
            seen[start, stop] = [start + s for s in bisect(points.values[start:stop], significant)]
        splits = seen[start, stop]
        found.update(splits)
        if stop == size:  # a window inside this one would only re-examine its points
            return sorted(found)
        start = max(splits[-1] if splits else 0, start + settings.window // 2)


def _search(points: _Points, settings: ChangeSettings, place: bool) -> list[Change]:
    """Split and merge; then each change placed where its two segments fit best (`_placed`) and the split step run
    again inside every segment, until the changes stay (at most SEARCH_ROUNDS rounds). The split step ends at its
    first refusal, so two shifts a week apart it first took as one between them are found only inside the
    segments on each side; the merge then drops the one between them. Rates (tested as counts) are placed by the
    binomial likelihood of their errors (`_split_fit`)."""
    seen: dict[tuple[int, int], list[int]] = {}
    changes = _merge(points, _weak_splits(points, settings, seen=seen), settings)
    placed: set[int] = set()  # a split is placed once: round after round it would walk PLACE_RUNS further each time
    for _ in range(SEARCH_ROUNDS):
        splits = [c.index for c in changes]
        if place:
            splits = _placed(points, splits, placed)
            placed.update(splits)
        bounds = [0, *splits, points.values.size]
        splits = sorted({*splits, *(s for start, stop in pairwise(bounds)
                                    for s in _weak_splits(points, settings, start, stop, seen))})
        if splits == [c.index for c in changes]:
            return changes  # nothing moved, nothing new: the merge would keep them as they are
        again = _merge(points, splits, settings)
        if [c.index for c in again] == [c.index for c in changes]:
            return again
        changes = again
    return changes


def retest(values: Sequence[float], own: list[int], fixed: list[int], settings: ChangeSettings,
           calls: Sequence[float] | None = None) -> list[Change]:
    """A series' own changes (indices into values) once a group found changes of it at `fixed`: those are new
    bounds of its segments, so each own change is placed again and retested against its new neighbours, the weakest
    dropped as in the merge step, until all pass. A change the series took between two shifts a week apart (one
    level of 4 nights too short to stand alone) is placed, or dropped, once the group has found one of them. Each
    change is placed once, as in `_search`: placed again after its neighbour was dropped, a change walks towards the
    middle of the two shifts its segment now holds (seed 1240 of issue 21's kind of history: night 29 to 31). With no
    `fixed` and a stricter p_value, the merge step again over a series' own changes (pooled.ALONE_P). With `calls`, a
    rate's changes are tested as counts, as `detect` tests them."""
    kept, points = _without_outliers(values, settings, calls)
    at = lambda indices: {int(i) for i in np.searchsorted(kept, indices)}
    mine, bounds = at(own), at(fixed)
    placed: set[int] = set()
    while mine:
        splits = _placed(points, sorted(mine | bounds), bounds | placed)
        mine = set(splits) - bounds
        placed = set(mine)
        edges = [0, *splits, points.values.size]
        changes = {edges[i]: _change(points, *edges[i - 1 : i + 2], settings) for i in range(1, len(edges) - 1)
                   if edges[i] in mine}
        weakest = max(changes.values(), key=lambda c: (c.p_value, -_magnitude(c)))
        if weakest.p_value <= settings.p_value and min(map(_magnitude, changes.values())) >= settings.min_change_pct:
            return [replace(c, index=int(kept[c.index])) for c in changes.values()]
        if weakest.p_value <= settings.p_value:
            weakest = min(changes.values(), key=_magnitude)
        mine.discard(weakest.index)
    return []


def change_at(values: Sequence[float], calls: Sequence[float] | None, first: int, split: int, last: int,
              settings: ChangeSettings) -> Change | None:
    """The change of a series at index `split` (the first kept point from there), its two sides the values kept
    at indices first..split-1 and split..last (`_without_outliers`); None when a side has none. A change placed by
    other evidence than the series' own search: a group's run (rate_groups.py)."""
    kept, points = _without_outliers(values, settings, calls)
    start, at, stop = (int(i) for i in np.searchsorted(kept, [first, split, last + 1]))
    if not start < at < stop:
        return None
    return replace(_change(points, start, at, stop, settings), index=int(kept[at]))


def step_preference(values: Sequence[float], calls: Sequence[float] | None, first: int, split: int, own: int,
                    last: int, settings: ChangeSettings) -> float:
    """The fit a step at index `own` gains over one at `split` in values[first..last] (outliers left out), as
    chi-square with one degree of freedom (`_split_fit`: squares taken off over the noise left after the step at
    `own`, for a rate twice the log-likelihood): negative where `split` fits better; infinite where a step at either
    leaves a side empty. Under PLACE_CHI2, the 5 % point, a step at `split` fits about as well; series that moved at
    one run add theirs up (`pooled._toward_claims`, `pooled._twins_preference`)."""
    kept, points = _without_outliers(values, settings, calls)
    start, stop = (int(i) for i in np.searchsorted(kept, [first, last + 1]))
    k = np.searchsorted(kept, [split, own]) - start
    if not (0 < k.min() and k.max() < stop - start):
        return float("inf")
    fit = _split_fit(points, start, stop, k)
    if points.calls is None:
        x = points.values[start:stop]
        noise = (np.sum((x - x.mean()) ** 2) - fit[1]) / (x.size - 2)
        return float((fit[1] - fit[0]) / noise) if noise > 0 else float("inf")
    return float(2 * (fit[1] - fit[0]))


def placed(values: Sequence[float], changes: list[Change], fixed: list[int],
           settings: ChangeSettings) -> list[Change]:
    """Changes `detect` found unplaced (place=False: a group's series), each moved to where its two segments fit best
    (`_placed`, up to PLACE_RUNS runs) with the `fixed` indices (no changes) as bounds too, and tested there between
    its neighbours. One at a bound, or that would turn the other way, stays as it was."""
    kept, points = _without_outliers(values, settings)
    bounds = {int(i) for i in np.searchsorted(kept, fixed)}
    splits = {int(np.searchsorted(kept, c.index)): c for c in changes}
    if len(splits) < len(changes):
        return changes  # two on one kept point (an outlier between them): left as found
    movable = {split: c for split, c in splits.items() if split not in bounds}
    order = sorted(movable.keys() | bounds)
    cuts = [0, *_placed(points, order, bounds), points.values.size]
    found = [c for split, c in splits.items() if split in bounds]
    for i, split in enumerate(order, start=1):
        if split in movable:
            change = replace(_change(points, cuts[i - 1], cuts[i], cuts[i + 1], settings), index=int(kept[cuts[i]]))
            same_way = np.sign(change.change_pct or 0) == np.sign(movable[split].change_pct or 0)
            found.append(change if same_way else movable[split])
    return sorted(found, key=lambda c: c.index)


def _without_outliers(values: Sequence[float], settings: ChangeSettings,
                      calls: Sequence[float] | None = None) -> tuple[np.ndarray, _Points]:
    """The indices of the values kept (present, no one-night outlier) and their points: tested as values, or as
    counts with `calls` (`_present_points`)."""
    x = np.asarray(values, dtype=float)
    present = np.flatnonzero(np.isfinite(x))
    points = _present_points(x, present, calls)
    outlier = _outliers(points, settings)
    return present[~outlier], points.take(~outlier)


def split_between(values: Sequence[float], fixed: list[int], settings: ChangeSettings) -> list[Change]:
    """The changes of a series inside the segments between `fixed` indices (not themselves changes): the split step
    in each segment, then `retest` with the bounds fixed. A shift the split step refused over a segment holding a
    smaller shift of some members (a group's series) is found once that shift bounds it."""
    kept, points = _without_outliers(values, settings)
    bounds = sorted({0, points.values.size, *(int(i) for i in np.searchsorted(kept, fixed))})
    found = {s for start, stop in pairwise(bounds) for s in _weak_splits(points, settings, start, stop)} - set(bounds)
    return retest(values, [int(kept[s]) for s in found], fixed, settings) if found else []


def _placed(points: _Points, splits: list[int], fixed: set[int] = frozenset()) -> list[int]:
    """Each split moved, one after the other, to the run up to PLACE_RUNS away where the two segments beside it (to
    the neighbouring splits) have the least squares about their means: where a shift of the mean is likeliest in
    gaussian noise (for rates, of the rate in binomial errors: `_split_fit`). E-divisive's candidate compares
    z[s:τ] with z[τ:κ], not the whole segments, and a few nights of noise after a small shift placed it 2-3 runs
    off. The `fixed` splits stay."""
    bounds = [0, *splits, points.values.size]
    for i in range(1, len(bounds) - 1):
        if bounds[i] in fixed:
            continue
        start, stop = bounds[i - 1], bounds[i + 1]
        k = np.arange(max(1, bounds[i] - start - PLACE_RUNS), min(stop - start - 1, bounds[i] - start + PLACE_RUNS) + 1)
        bounds[i] = start + int(k[np.argmax(_split_fit(points, start, stop, k))])
    return bounds[1:-1]


def _split_fit(points: _Points, start: int, stop: int, k: np.ndarray) -> np.ndarray:
    """How well two levels split at start + k fit points[start:stop] (larger is better): for values, the squares the
    split takes off (n·m/(n+m)·(mean₁ − mean₂)²); for rates, the binomial log-likelihood of the errors of each side
    at its own rate (the least squares of rates with a few errors a night are ruled by their noisiest nights)."""
    if points.calls is None:
        x = points.values[start:stop] - np.mean(points.values[start:stop])
        sums = np.cumsum(x)[k - 1]
        return sums**2 * (stop - start) / (k * (stop - start - k))
    errors = np.cumsum(points.values[start:stop] * points.calls[start:stop])
    calls = np.cumsum(points.calls[start:stop])
    return _loglik(errors[k - 1], calls[k - 1]) + _loglik(errors[-1] - errors[k - 1], calls[-1] - calls[k - 1])


def _loglik(errors: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """The binomial log-likelihood of `errors` in `calls` at their own rate (0 · log 0 = 0)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(calls > 0, errors / calls, 0.0)
        hits = np.where(errors > 0, errors * np.log(rate), 0.0)
        misses = np.where(calls - errors > 0, (calls - errors) * np.log1p(-rate), 0.0)
    return hits + misses


def _merge(points: _Points, splits: list[int], settings: ChangeSettings) -> list[Change]:
    """Merge step: drop the weakest split, retest its neighbours, until `_weakest` has none to drop."""
    bounds = [0, *splits, points.values.size]
    changes = [_change(points, *bounds[i : i + 3], settings) for i in range(len(splits))]
    while (weakest := _weakest(changes, bounds, settings)) is not None:
        del changes[weakest], bounds[weakest + 1]
        # The two segments beside it are now one: the splits at its ends are tested against it.
        for i in (weakest - 1, weakest):
            if 0 <= i < len(changes):
                changes[i] = _change(points, *bounds[i : i + 3], settings)
    return changes


def _weakest(changes: list[Change], bounds: list[int], settings: ChangeSettings) -> int | None:
    """Which of `changes` (at bounds[1:-1]) to drop next, or None when all are kept.

    First, of two changes around a single run, the less significant (on a tie, the smaller): one run
    inside the series is no level. Then, as Otava, the least significant change while any has a p-value
    above `p_value`, and the smallest while any is below `min_change_pct`.
    """
    if not changes:
        return None
    indices = range(len(changes))
    for i in indices[:-1]:
        if bounds[i + 2] - bounds[i + 1] == 1:
            return max(i, i + 1, key=lambda j: (changes[j].p_value, -_magnitude(changes[j])))
    weakest = max(indices, key=lambda i: changes[i].p_value / p_limit(changes[i], settings))
    if changes[weakest].p_value > p_limit(changes[weakest], settings):
        return weakest
    weakest = min(indices, key=lambda i: _magnitude(changes[i]))
    return weakest if _magnitude(changes[weakest]) < settings.min_change_pct else None


def p_limit(change: Change, settings: ChangeSettings) -> float:
    """The p-value a change is kept at: `p_value`, x PENDING_P while it is pending."""
    return settings.p_value * (PENDING_P if change.pending else 1)


def _change(points: _Points, start: int, split: int, stop: int, settings: ChangeSettings) -> Change:
    """The change at `split` between the segments values[start:split] and values[split:stop]; pending while a
    side has fewer than `settle_runs` runs (a level of one or two nights may still turn out an outlier)."""
    before, after = _median(points.values[start:split]), _median(points.values[split:stop])
    pending = min(split - start, stop - split) < settings.settle_runs
    return Change(split, "change", before, after, _pct(before, after), points.p(start, split, stop), pending)


def _median(values: np.ndarray) -> float:
    """np.median of values without NaN (a segment: never empty), the same number at a tenth of its cost: `_change`
    takes two for every split the search weighs (27,000 calls in `bench/history.py`'s analysis, a seventh of it
    through np.median)."""
    middle = values.size // 2
    if values.size % 2:
        return float(np.partition(values, middle)[middle])
    low, high = np.partition(values, (middle - 1, middle))[middle - 1:middle + 1]
    return float((low + high) / 2)


def _outlier_change(clean: _Points, bounds: np.ndarray, kept: np.ndarray, point: _Points, index: int,
                    settings: ChangeSettings) -> Change:
    """The outlier at `index` (its value and calls: `point`) against the segment (between change points) of the
    clean series around it; pending while fewer than `settle_runs` runs follow it."""
    at = int(np.searchsorted(kept, index))  # position it would take in the clean series
    segment = int(np.searchsorted(bounds, at)) - 1  # just before a change: the segment it ends
    start, stop = int(bounds[segment]), int(bounds[segment + 1])
    around = _Points(np.r_[clean.values[start:stop], point.values],
                     None if clean.calls is None else np.r_[clean.calls[start:stop], point.calls], clean.floor)
    before, value = float(np.median(clean.values[start:stop])), float(point.values[0])
    pending = kept.size - at < settings.settle_runs
    return Change(index, "outlier", before, value, _pct(before, value), around.p(0, stop - start, stop - start + 1),
                  pending)


def _relevant(outlier: Change, settings: ChangeSettings) -> bool:
    """Whether to report an outlier: on the terms the merge keeps a change, significant and large enough."""
    return outlier.p_value <= settings.p_value and _magnitude(outlier) >= settings.min_change_pct


def _pct(before: float, after: float) -> float | None:
    if before == 0:
        return 0.0 if after == 0 else None
    return (after - before) / abs(before) * 100


def _magnitude(change: Change) -> float:
    """Size of the change in %, for min_change_pct; infinite from a level of 0."""
    return np.inf if change.change_pct is None else abs(change.change_pct)
