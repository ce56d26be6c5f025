"""Pooled evidence: a shift that one code change makes in a group of series at once, found even when each
series alone is under its threshold (a +6 % on one endpoint, 8 series each at its detection floor).

The groups are the series one change is expected to move together, within a plan and a metric:
- `label L`: one label (or `(all)`) of one host across every side and iteration;
- `iteration N SIDE`: the labels of one side, host and iteration (not `(all)`, which is their mix).

A group's evidence is one series: each member's value relative to its own median, weighted by the inverse
of its noise squared (`changepoints.relative_noise`, its one-night outliers left out), averaged run by run:
the numerator of Stouffer's combined Z, in % of the level. The same `detect` (E-divisive, the t-test at
`p_value`, `min_change_pct` on the pooled size) then runs on it. The t-test estimates the noise of the
average from the average itself, so members that share their night-to-night noise (a slow night slows
every label) are not counted as independent evidence: the false-change rate of a group is that of one
series at `p_value`, and the groups add about one test per four series.

A change the group found becomes a change point of each member that moved with it and has none of its own
within a run: at the group's run and between the group's neighbouring changes, in the same direction, at
least half the group's size (closer to the group's shift than to none), and its own t-test p <= MEMBER_P
(the group already answered whether anything moved; this only says which series did).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tasks.history.changepoints import Change, ChangeSettings, detect, outlier_mask, relative_noise
from tasks.history.significance import student_p

MEMBER_P = 0.05  # a member's own t-test at the group's change, for the group to name it
NOISE_FLOOR = 0.002  # relative noise no member is weighted beyond (a nearly constant series)
RATES = frozenset({"error_rate"})  # proportions of the calls: tested as counts (significance.count_p)
UNPOOLED = frozenset({"max_ms", *RATES})  # extremes (one call) and rates stay alone


@dataclass
class Series:
    """One series of a plan: its key, the place of each of its runs among the plan's runs, its values."""

    key: dict
    positions: np.ndarray
    values: np.ndarray
    calls: np.ndarray
    changes: list[Change] = field(default_factory=list)  # its own change points (indices into values)


def find_changes(series: list[Series], settings: ChangeSettings) -> list[tuple[Series, Change, str]]:
    """Every change point and outlier of a plan's series: each series' own (found by `series`), then those its
    groups found (found by the group's name), one per series and run."""
    found = []
    for s in series:
        s.changes = detect(s.values, settings, s.calls if s.key["metric"] in RATES else None)
        found += [(s, change, "series") for change in s.changes]
    for name, members in groups(series):
        for member, change in pooled_changes(members, settings):
            member.changes.append(change)  # a later group does not name it again at that run or next to it
            found.append((member, change, name))
    return found


def groups(series: list[Series]) -> list[tuple[str, list[Series]]]:
    """The groups of two or more series with their names (within one scenario and plan: the caller's)."""
    found: dict[tuple, list[Series]] = {}
    for s in series:
        k = s.key
        if k["metric"] in UNPOOLED:
            continue
        found.setdefault(("label", k["metric"], k["host"], k["label"]), []).append(s)
        if k["label"] != "(all)":
            found.setdefault(("iteration", k["metric"], k["side"], k["host"], k["iteration"]), []).append(s)
    return [(_name(key, len(members)), members) for key, members in found.items() if len(members) > 1]


def _name(key: tuple, size: int) -> str:
    if key[0] == "label":
        _, _, host, label = key
        where = "" if host == "(all)" else f" on {host}"
        return f"{'(all)' if label == '(all)' else 'label ' + label}{where}: {size} series"
    _, _, side, host, iteration = key
    return f"iteration {iteration} {side}{'' if host == '(all)' else ' ' + host}: {size} labels"


def pooled_changes(members: list[Series], settings: ChangeSettings) -> list[tuple[Series, Change]]:
    """The change points of members that a group's pooled series shows and their own detection missed."""
    columns, pooled, clean = _pooled(members, settings)
    if np.isfinite(pooled).sum() < settings.min_runs:
        return []
    shifts = [c for c in detect(pooled, settings) if c.kind == "change"]
    bounds = [0, *(c.index for c in shifts), columns.size]
    found = []
    for i, shift in enumerate(shifts):
        before, after = columns[bounds[i] : shift.index], columns[shift.index : bounds[i + 2]]
        for member, values in zip(members, clean):
            change = _member_change(member, values, before, after, shift, settings)
            if change is not None:
                found.append((member, change))
    return found


def _pooled(members: list[Series], settings: ChangeSettings) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The plan positions the members have, the group's series over them (1 + the weighted mean relative
    deviation), and each member's values without its one-night outliers (NaN)."""
    columns = np.unique(np.concatenate([m.positions for m in members]))
    total, weight = np.zeros(columns.size), np.zeros(columns.size)
    clean = []
    for member in members:
        values = np.where(np.isfinite(member.values), member.values, np.nan)
        present = np.flatnonzero(np.isfinite(values))
        values[present[outlier_mask(values[present], settings)]] = np.nan
        clean.append(values)
        kept = values[np.isfinite(values)]
        level = float(np.median(kept)) if kept.size else 0.0
        if kept.size < settings.min_runs or level <= 0:
            continue
        w = 1 / max(relative_noise(kept), NOISE_FLOOR) ** 2
        at = np.searchsorted(columns, member.positions)
        ok = np.isfinite(values)
        np.add.at(total, at[ok], w * (values[ok] / level - 1))
        np.add.at(weight, at[ok], w)
    with np.errstate(invalid="ignore", divide="ignore"):
        return columns, np.where(weight > 0, 1 + total / weight, np.nan), clean


def _member_change(member: Series, values: np.ndarray, before: np.ndarray, after: np.ndarray, shift: Change,
                   settings: ChangeSettings) -> Change | None:
    """The member's change at the group's, when it moved with the group and found nothing there itself."""
    at = after[0]
    if any(c.kind == "change" and abs(int(member.positions[c.index]) - at) <= 1 for c in member.changes):
        return None
    ok = np.isfinite(values)
    left = values[ok & np.isin(member.positions, before)]
    right_mask = ok & np.isin(member.positions, after)
    right = values[right_mask]
    if left.size < 2 or right.size < 1:
        return None
    low, high = float(np.median(left)), float(np.median(right))
    if low <= 0 or shift.change_pct is None:
        return None
    pct = (high - low) / low * 100
    p = student_p(left, right)
    if np.sign(pct) != np.sign(shift.change_pct) or abs(pct) < abs(shift.change_pct) / 2 or p > MEMBER_P:
        return None
    index = int(np.flatnonzero(right_mask)[0])
    return Change(index, "change", low, high, pct, p, min(left.size, right.size) < settings.settle_runs)
