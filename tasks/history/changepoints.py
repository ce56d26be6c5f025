"""Change points in one nightly series: the runs where a metric's level moved, and one-night outliers.

The method is Apache Otava's (formerly Hunter; Fleming et al. 2023, "Hunter: Using Change Point Detection
to Hunt for Performance Regressions"): E-divisive means (`edivisive.py`), with Student's t-test between the
two segments beside a candidate in place of the paper's permutation test (much faster, and it works on
the short segments a nightly history has), run over sliding windows so a long history stays fast and a
small shift is not drowned by a long one. The windows find "weak" change points at a relaxed p-value; a
merge step then drops them one at a time, weakest first, and retests its neighbours on the joined segment.

Where this differs from Otava, and why:
- One-night outliers are taken out first (`_outliers`) and reported apart: left in, E-divisive would
  report a change up and one back down, and their spread would hide real changes from the t-test.
- A single run between two changes is never a level (`_weakest`): the same up-and-down for a night that
  the outlier rule let through.
- Sizes are relative changes of segment medians, not means: one night does not move a median.
- p_value defaults to 1e-4, not 0.001: the t-test is asked about the best split of all, so its p-value
  is optimistic. At 0.001 a campaign of 36 series of 40 nights got up to 2 false changes
  (`bench/history_accuracy.py`), at 1e-4 none. The price is paid on the newest nights: a 15 % shift
  over 3 % noise is found 94 times in 100 after two nights (97 at 0.001), 71 after one (85).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import special

from tasks.bundle.manifest import HistoryOptions
from tasks.history.edivisive import bisect

NEIGHBOURS = 3  # points on each side that an outlier is compared with
OUTLIER_NOISE = 6.0  # an outlier is this many times the series' noise away from both sides


_DEFAULTS = HistoryOptions()  # the defaults a campaign file and a manifest share


@dataclass(frozen=True)
class ChangeSettings:
    min_change_pct: float = _DEFAULTS.min_change_pct  # smaller moves of the level (between segment medians): none
    p_value: float = _DEFAULTS.p_value  # significance of the t-test (Otava's is 0.001; see the module docstring)
    min_runs: int = _DEFAULTS.min_runs  # a series with fewer points claims nothing
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
    p_value: Student's t-test of the two segments (for an outlier: of its value against its segment).
    """

    index: int
    kind: str  # "change" or "outlier"
    before_value: float
    after_value: float
    change_pct: float | None
    p_value: float


def detect(values: Sequence[float], settings: ChangeSettings = ChangeSettings()) -> list[Change]:
    """Change points and one-night outliers of a series ordered by run, sorted by index.

    NaN (and ±inf) points, runs without the metric, are skipped; indices still count them.
    """
    x = np.asarray(values, dtype=float)
    present = np.flatnonzero(np.isfinite(x))
    if present.size < settings.min_runs:
        return []
    series = x[present]
    outlier = _outliers(series, settings)
    kept, clean = present[~outlier], series[~outlier]
    changes = _merge(clean, _weak_splits(clean, settings), settings)
    bounds = np.array([0, *(c.index for c in changes), clean.size])
    found = [replace(c, index=int(kept[c.index])) for c in changes]
    outliers = (_outlier_change(clean, bounds, kept, int(i), float(x[i])) for i in present[outlier])
    found += [o for o in outliers if _relevant(o, settings)]
    return sorted(found, key=lambda c: c.index)


def _outliers(series: np.ndarray, settings: ChangeSettings) -> np.ndarray:
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
    limit = max(OUTLIER_NOISE * _relative_noise(series), settings.min_change_pct / 100)
    # Compared without dividing, so that a level of 0 makes any other value "infinitely" far.
    far = (np.abs(inner - before) > limit * np.abs(before)) & (np.abs(inner - after) > limit * np.abs(after))
    same_side = np.sign(inner - before) == np.sign(inner - after)
    one_level = np.abs(after - before) <= limit * np.minimum(np.abs(before), np.abs(after))
    return np.concatenate([[False], far & same_side & one_level, [False]])


def _relative_noise(series: np.ndarray) -> float:
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


def _weak_splits(series: np.ndarray, settings: ChangeSettings) -> list[int]:
    """Split step: E-divisive in windows of `window` points, half-overlapping, at a relaxed p-value.

    As in Otava, a window starts at the last split found in the one before (or half a window on), so the
    level after a change is analysed apart from the one before it.
    """
    relaxed = min(10 * settings.p_value, max(settings.p_value, 0.5))  # Otava's weak points: 10 x p_value
    significant = lambda left, right: _student_p(left, right) <= relaxed
    found: set[int] = set()
    start = 0
    while True:
        stop = min(start + settings.window, series.size)
        splits = [start + s for s in bisect(series[start:stop], significant)]
        found.update(splits)
        if stop == series.size:  # a window inside this one would only re-examine its points
            return sorted(found)
        start = max(splits[-1] if splits else 0, start + settings.window // 2)


def _merge(series: np.ndarray, splits: list[int], settings: ChangeSettings) -> list[Change]:
    """Merge step: drop the weakest split, retest its neighbours, until `_weakest` has none to drop."""
    bounds = [0, *splits, series.size]
    changes = [_change(series, *bounds[i : i + 3]) for i in range(len(splits))]
    while (weakest := _weakest(changes, bounds, settings)) is not None:
        del changes[weakest], bounds[weakest + 1]
        # The two segments beside it are now one: the splits at its ends are tested against it.
        for i in (weakest - 1, weakest):
            if 0 <= i < len(changes):
                changes[i] = _change(series, *bounds[i : i + 3])
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
    weakest = max(indices, key=lambda i: changes[i].p_value)
    if changes[weakest].p_value > settings.p_value:
        return weakest
    weakest = min(indices, key=lambda i: _magnitude(changes[i]))
    return weakest if _magnitude(changes[weakest]) < settings.min_change_pct else None


def _change(series: np.ndarray, start: int, split: int, stop: int) -> Change:
    """The change at `split` between the segments series[start:split] and series[split:stop]."""
    left, right = series[start:split], series[split:stop]
    before, after = float(np.median(left)), float(np.median(right))
    return Change(split, "change", before, after, _pct(before, after), _student_p(left, right))


def _outlier_change(
    clean: np.ndarray, bounds: np.ndarray, kept: np.ndarray, index: int, value: float
) -> Change:
    """The outlier at `index` against the segment (between change points) of the clean series around it."""
    at = int(np.searchsorted(kept, index))  # position it would take in the clean series
    segment = int(np.searchsorted(bounds, at)) - 1  # just before a change: the segment it ends
    around = clean[bounds[segment] : bounds[segment + 1]]
    before = float(np.median(around))
    return Change(index, "outlier", before, value, _pct(before, value), _student_p(around, np.array([value])))


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


def _student_p(left: np.ndarray, right: np.ndarray) -> float:
    """Two-sided p-value of Student's pooled-variance t-test of the means of left and right.

    Pooled, as Otava's `ttest_ind_from_stats` call: Welch's test has almost no degrees of freedom when
    one side is one to three nights, the very case of a change in the last runs. Two constant sides
    (an error rate of 0 every night) are equal or differ for certain; the formula would divide 0 by 0.
    """
    df = left.size + right.size - 2
    if df < 1:
        return 1.0
    if np.ptp(left) == 0 and np.ptp(right) == 0:
        return 1.0 if left[0] == right[0] else 0.0
    mean_left, mean_right = left.sum() / left.size, right.sum() / right.size
    centred_left, centred_right = left - mean_left, right - mean_right
    squares = centred_left @ centred_left + centred_right @ centred_right
    t = (mean_right - mean_left) / np.sqrt(squares / df * (1 / left.size + 1 / right.size))
    return float(2 * special.stdtr(df, -abs(t)))
