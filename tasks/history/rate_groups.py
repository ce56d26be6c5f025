"""Error rates placed by the errors of their label summed over its iterations.

A label's errors rise at one night in every iteration. The iteration with the most calls shows the night
exactly; one with a few hundred calls a night has a few errors on each side of it, and its own split (where the
binomial likelihood of its errors is highest) often lands 2-3 nights late. On issue 21's kind of history (label A
from 0.2 % to 3 % of errors at night 25), 20 of the 134 false change points of seeds 1200-1599 were that rise,
placed off by iteration 1's series (450 calls a night): each was a false change and a missed one.

A group is the error rates of one label (or `(all)`) of one side and host over the iterations of a plan; the
sides are not summed together, as they count the same calls' errors twice. Its errors and calls are summed night
by night and `detect` tests the sum as counts (significance.py), its overdispersion estimated from its own nights.
For each settled change of the sum, a member's own change in the same direction up to MOVE_RUNS runs away (and
none of its own at the sum's run) moves to the sum's run when
- the other members' summed errors changed there too: the count test of their segments at p_value, the same way
  (the member's own errors, a share of the sum, are no evidence of where they changed);
- and the member's own count test at that run, between its neighbouring changes, passes p_value.
A group only moves changes its members found; it names none in a member that found none.
"""

from __future__ import annotations

import numpy as np

from tasks.history.changepoints import Change, ChangeSettings, change_at, detect
from tasks.history.series import Series
from tasks.history.significance import count_p, successive_overdispersion

MOVE_RUNS = 4  # runs: a member's own change this close to its group's, in its direction, may move to the group's run


def rate_groups(rates: list[Series]) -> list[tuple[str, list[Series]]]:
    """The groups of two or more rate series (one metric, side, host and label) with their names."""
    found: dict[tuple, list[Series]] = {}
    for s in rates:
        found.setdefault((s.key["metric"], s.key["side"], s.key["host"], s.key["label"]), []).append(s)
    return [(_name(key, len(members)), members) for key, members in found.items() if len(members) > 1]


def _name(key: tuple, size: int) -> str:
    metric, side, host, label = key
    where = side if host == "(all)" else f"{side} {host}"
    return f"{label if label == '(all)' else 'label ' + label} {where} {metric}: {size} iterations"


def placed_rate_changes(members: list[Series], settings: ChangeSettings) -> list[tuple[Series, Change, Change]]:
    """The members' changes that move to a run of their group's summed errors: (member, its change at the group's
    run, its own change that this replaces)."""
    columns, rates, calls = _summed(members)
    if np.isfinite(rates).sum() < settings.min_runs:
        return []
    shifts = [c for c in detect(rates, settings, calls) if c.kind == "change" and not c.pending]
    bounds = [0, *(int(columns[c.index]) for c in shifts), int(columns[-1]) + 1]
    moves = []
    for i, shift in enumerate(shifts):
        first, at, last = bounds[i], bounds[i + 1], bounds[i + 2] - 1
        direction = np.sign(shift.after_value - shift.before_value)
        for member in members:
            move = _moved(member, members, (first, at, last), direction, settings)
            if move is not None:
                moves.append((member, *move))
    return moves


def _moved(member: Series, members: list[Series], span: tuple[int, int, int], direction: float,
           settings: ChangeSettings) -> tuple[Change, Change] | None:
    """The member's change at the group's run (span: the group's segments' first position, the run, the last) and
    the own change it replaces, or None (see the module docstring)."""
    first, at, last = span
    own = [(int(member.positions[c.index]), c) for c in member.changes if c.kind == "change"]
    near = sorted((abs(pos - at), pos, c) for pos, c in own if abs(pos - at) <= MOVE_RUNS)
    if not near or near[0][0] == 0 or np.sign(near[0][2].after_value - near[0][2].before_value) != direction:
        return None
    moved = near[0][2]
    if not _others_changed([m for m in members if m is not member], span, direction, settings):
        return None
    others = [pos for pos, c in own if c is not moved]
    first = max([first, *(pos for pos in others if pos < at)])
    last = min([last, *(pos - 1 for pos in others if pos > at)])
    index = lambda position: int(np.searchsorted(member.positions, position))
    change = change_at(member.values, member.calls, index(first), index(at), index(last + 1) - 1, settings)
    if (change is None or int(member.positions[change.index]) != at or change.p_value > settings.p_value
            or np.sign(change.after_value - change.before_value) != direction):
        return None
    return change, moved


def _others_changed(others: list[Series], span: tuple[int, int, int], direction: float,
                    settings: ChangeSettings) -> bool:
    """Whether the other members' summed errors changed at the group's run, in `direction`, at p_value."""
    first, at, last = span
    columns, rates, calls = _summed(others)
    ok = np.isfinite(rates)
    left, right = ok & (columns >= first) & (columns < at), ok & (columns >= at) & (columns <= last)
    if not left.any() or not right.any():
        return False
    before = rates[left] @ calls[left] / calls[left].sum()
    after = rates[right] @ calls[right] / calls[right].sum()
    floor = successive_overdispersion(rates[ok], calls[ok])
    return bool(np.sign(after - before) == direction
                and count_p(rates[left], calls[left], rates[right], calls[right], floor) <= settings.p_value)


def _summed(members: list[Series]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plan positions the members have, their summed errors over their summed calls there (NaN without calls),
    and the summed calls."""
    columns = np.unique(np.concatenate([m.positions for m in members]))
    errors, calls = np.zeros(columns.size), np.zeros(columns.size)
    for m in members:
        ok = np.isfinite(m.values)
        at = np.searchsorted(columns, m.positions[ok])
        np.add.at(errors, at, m.values[ok] * m.calls[ok])
        np.add.at(calls, at, m.calls[ok])
    with np.errstate(invalid="ignore", divide="ignore"):
        return columns, np.where(calls > 0, errors / calls, np.nan), calls
