"""Night noise that every series of a side shares: a slow night (a busy host, a noisy neighbour) slows every
label and iteration of it by about the same factor. Each series alone cannot tell it from its own noise, but
in a group's pooled series it does not average out: over 8 members it was most of the pooled noise on issue
21's kind of history, and a few nights of it (after a real shift, or a real shift's group run) placed the
group's change two or three nights off, or named members that did not move.

The shared part of a night is the median, over the series of one side, host and kind of metric (every latency
percentile of a side is one kind: pooled._noise_kind), of each value relative to the level of its segment (between
the series' own change points; one-night outliers left out): a change of one label, or of some iterations, is a
minority of the series and does not move the median. A change of most series the series alone missed does move it,
for good: that part is a level of its own (found by `detect` on the shared series) and stays in the values; only the
night-to-night rest is divided out. The groups test and place their changes on the values so corrected; each series'
own detection and the sizes reported are not corrected.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from tasks.history.changepoints import Change, ChangeSettings, detect, outlier_mask

STEP_P = 0.01  # a step of the shared series is a level at this p (or p_value, if larger): not noise to divide out
MIN_SERIES = 3  # fewer series of a side on a night: nothing is shared to estimate


def without_outliers(values: np.ndarray, settings: ChangeSettings) -> np.ndarray:
    """The values with their one-night outliers (and missing runs) as NaN."""
    clean = np.where(np.isfinite(values), values, np.nan)
    present = np.flatnonzero(np.isfinite(clean))
    clean[present[outlier_mask(clean[present], settings)]] = np.nan
    return clean


def levels(values: np.ndarray, changes: list[Change]) -> np.ndarray:
    """Each value's level: the median of its segment between the change points (kind `change`)."""
    level = np.full(values.size, np.nan)
    cuts = [0, *(c.index for c in changes if c.kind == "change"), values.size]
    for start, stop in zip(cuts, cuts[1:]):
        segment = values[start:stop][np.isfinite(values[start:stop])]
        level[start:stop] = np.median(segment) if segment.size else np.nan
    return level


def shared_noise(positions: list[np.ndarray], clean: list[np.ndarray], changes: list[list[Change]],
                 settings: ChangeSettings, step_pct: float, size: int) -> np.ndarray:
    """The relative noise the series given (of one side, host and kind of metric) shared on each of `size` plan
    positions (0 where too few series tell): see the module docstring. `step_pct`: the least level of the
    shared series kept."""
    table = np.full((len(clean), size), np.nan)
    for row, at, values, own in zip(table, positions, clean, changes):
        level = levels(values, own)
        with np.errstate(invalid="ignore", divide="ignore"):
            row[at] = np.where(level > 0, values / level - 1, np.nan)
    enough = np.isfinite(table).sum(axis=0) >= MIN_SERIES
    noise = np.zeros(size)
    if enough.sum() < settings.min_runs:
        return noise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column is left out by `enough`
        common = np.nanmedian(table[:, enough], axis=0)
    steps = detect(1 + common, replace(settings, min_change_pct=step_pct, p_value=max(STEP_P, settings.p_value)))
    noise[enough] = common - levels(common, steps)
    return noise
