"""Pooled evidence (tasks/history/pooled.py), rates as counts (significance.py) and pending changes, on series
written directly (tests/unit/history/synthetic.py): no bundle, no ingest, milliseconds per history."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.history.changepoints import ChangeSettings, detect
from tasks.history.pooled import find_changes
from tasks.history.series import Series
from tasks.history.significance import count_p, successive_overdispersion
from tests.unit.history.synthetic import OUTLIER, detect_history, score, series_id, sixty_nights

SHIFT_AT = 22


def nightly(values: np.ndarray, label: str = "B", side: str = "server", iteration: int = 1,
            metric: str = "p95_ms") -> Series:
    """One series of plan p, one value a night, 1,000 calls each."""
    key = {"scenario": "s", "plan_id": "p", "side": side, "host": "(all)", "iteration": iteration, "label": label,
           "metric": metric}
    return Series(key, np.arange(values.size), values, np.full(values.size, 1000.0))


def one_label(seed: int, noise: tuple[float, float], shift: float = 1.0, nights: int = 40) -> list[Series]:
    """Label B's p95 over 2 sides x 4 iterations, each with its own noise and 1 % shared by every series of a
    night; from SHIFT_AT on, x shift."""
    rng = np.random.default_rng(seed)
    shared = 0.01 * rng.standard_normal(nights)
    series = []
    for side in ("server", "client"):
        for iteration in (1, 2, 3, 4):
            values = 100 * (1 + shared + rng.uniform(*noise) * rng.standard_normal(nights))
            values[SHIFT_AT:] *= shift
            series.append(nightly(values, side=side, iteration=iteration))
    return series


def test_no_shift_gives_at_most_one_false_change_in_ten_histories():
    """The documented level (docs/history.md): 100 histories of 8 series x 40 nights without a shift."""
    false, by_groups = 0, 0
    for seed in range(100):
        found = [(s, c, by) for s, c, by in find_changes(one_label(seed, (0.02, 0.04)), ChangeSettings())
                 if c.kind == "change"]
        false += len(found)
        by_groups += sum(by != "series" for *_, by in found)
    assert false <= 3, false  # what these 100 give (2026-12-04); the documented level is 10
    assert by_groups == 0, by_groups


@pytest.mark.parametrize(("noise", "shift"), [((0.01, 0.02), 1.06), ((0.02, 0.04), 1.06), ((0.02, 0.04), 1.08),
                                              ((0.03, 0.05), 1.09)])
def test_a_small_one_label_shift_is_found_at_its_run_by_its_group(noise, shift):
    found, alone, misplaced, groups = 0, 0, 0, set()
    for seed in range(30):
        series = one_label(seed, noise, shift)
        alone += sum(any(c.kind == "change" and abs(c.index - SHIFT_AT) <= 1 for c in detect(s.values)) for s in series)
        changes = [(s, c, by) for s, c, by in find_changes(series, ChangeSettings()) if c.kind == "change"]
        at_shift = [(s, c, by) for s, c, by in changes if abs(c.index - SHIFT_AT) <= 1]
        found += len({id(s) for s, _, _ in at_shift})
        misplaced += len(changes) - len(at_shift)
        groups |= {by for *_, by in at_shift}
        assert all(c.change_pct > 0 and c.before_value < c.after_value for _, c, _ in at_shift)
    assert found >= 0.85 * 30 * 8, (found, alone)
    assert found > alone  # the group finds what the series alone miss
    assert "label B: 8 series" in groups
    assert misplaced <= 0.08 * 30 * 8, misplaced


def short_plan(seed: int, latency: float, throughput: float, nights: int = 8, at: int = 3) -> list[Series]:
    """Server iteration 4's labels A, B and C in a plan of 8 nights (issue 21's plan B): p50 at 3-5 % noise and calls a
    second at 2 %, with 1 % shared by every series of a night; from night `at` on, p50 x latency and calls x
    throughput."""
    rng = np.random.default_rng(seed)
    shared = 0.01 * rng.standard_normal(nights)
    series = []
    for label in "ABC":
        for metric, level, step, noise in (("p50_ms", 20.0, latency, rng.uniform(0.03, 0.05)),
                                           ("calls_per_s", 5.0, throughput, 0.02)):
            values = level * (1 + shared + noise * rng.standard_normal(nights))
            values[at:] *= step
            series.append(nightly(values, label=label, iteration=4, metric=metric))
    return series


def test_a_throughput_step_is_tested_in_its_iterations_latency_at_its_run(monkeypatch):
    """Plan B of issue 21's kind of history: 3 nights, then server iteration 4's p50 +10 % and its calls a second
    -15 %. The labels' group searched alone reaches p about 1e-3, short of `p_value`; tested at the run its throughput
    group settled (`_load_hints`), it names most of them. A throughput step with no latency step names none. Each
    change at the step is the rise of the medians of the series' own values before and after it (numpy)."""
    from tasks.history import pooled

    def p50_changes(latency: float, throughput: float) -> tuple[int, int]:
        at_step = elsewhere = 0
        for seed in range(100):
            for s, c, _ in find_changes(short_plan(seed, latency, throughput), ChangeSettings()):
                if s.key["metric"] == "p50_ms" and c.kind == "change":
                    at_step += c.index == 3 and latency != 1.0
                    elsewhere += c.index != 3 or latency == 1.0
                    if c.index == 3:
                        before, after = np.median(s.values[:3]), np.median(s.values[3:])
                        assert (c.before_value, c.after_value) == pytest.approx((before, after), rel=1e-12)
                        assert after > before
        return at_step, elsewhere

    assert p50_changes(1.10, 0.85) == (97, 4)  # of 300 series
    assert p50_changes(1.0, 0.85) == (0, 0)
    assert p50_changes(1.10, 1.0) == (22, 4)  # no throughput step: the search alone
    monkeypatch.setattr(pooled, "LOAD_P", 0.0)
    assert p50_changes(1.10, 0.85) == (22, 4)


def test_a_group_claims_only_a_shift_of_group_size_or_more():
    """A group's pooled shift under min_change_pct x GROUP_SIZE (3.5 %) claims nothing, though its t-test is sure of
    it (8 quiet series, +3 % each: under POOLED_SIZE's 2.5 % it used to name 6-8 of them in most of these seeds); a
    shift of 4.5 % is found in every series, by the group."""
    for shift, expected in ((1.03, 0), (1.045, 8)):
        for seed in range(20):
            changes = [(s, c, by) for s, c, by in find_changes(one_label(seed, (0.005, 0.01), shift), ChangeSettings())
                       if c.kind == "change"]
            if expected:
                assert len(changes) >= expected - 2 and any(by == "label B: 8 series" for *_, by in changes), seed
            else:
                assert not changes, (seed, changes)


def test_a_group_names_only_the_labels_that_moved():
    rng = np.random.default_rng(5)
    series = []
    for label in ("A", "B", "C"):
        values = 100 * (1 + 0.015 * rng.standard_normal(40))
        if label != "C":
            values[SHIFT_AT:] *= 0.9
        series.append(nightly(values, label, metric="p50_ms"))
    moved = {s.key["label"] for s, c, _ in find_changes(series, ChangeSettings()) if c.kind == "change"}
    assert moved == {"A", "B"}


def test_a_labels_members_that_moved_as_one_are_named_together_and_a_shift_of_some_iterations_is_not_one_move():
    """A label's 8 series that rose 6 % at one run (3-5 % noise each) are one move: each is named there with its
    levels the medians of its values over OTHERS_RUNS runs on each side, whatever its own test says. The same label
    where only iterations 3 and 4 rose 15 % is not one move (Cochran's Q far beyond chi-square's 7 degrees of freedom):
    none is named by it, and a member's own test names it there only at MEMBER_P x APART_MEMBER_P. Seed 6 (the shared
    noise left the mean move at 3.4 %, under GROUP_SIZE x min_change_pct) and seed 9 (homogeneity p 0.085) are the
    misses of seeds 0-9; Q's p is scipy's chi-square survival function."""
    from scipy import stats

    from tasks.history import pooled
    from tasks.history.significance import homogeneity_p

    runs, settings = pooled.OTHERS_RUNS, ChangeSettings()

    def moves(members: list[Series]) -> list[tuple] | None:
        for member in members:
            member.clean = member.values
        return pooled._label_moves(members, [m.values for m in members], (0, SHIFT_AT, 39), settings)

    for seed in (6, 9):
        assert pooled._moved_together(moves(one_label(seed, (0.03, 0.05), shift=1.06)), 1.0, settings) == {}
    for seed in (0, 1, 2, 3, 4, 5, 7, 8):
        members = one_label(seed, (0.03, 0.05), shift=1.06)
        even = moves(members)
        named = pooled._moved_together(even, 1.0, settings)
        assert set(named) == {id(m) for m in members}, seed
        assert pooled._label_member_p(even, pooled.MEMBER_P) == pooled.MEMBER_P
        for member in members:
            change, values = named[id(member)], member.values
            assert change.index == SHIFT_AT
            assert change.before_value == pytest.approx(np.median(values[SHIFT_AT - runs:SHIFT_AT]))
            assert change.after_value == pytest.approx(np.median(values[SHIFT_AT:SHIFT_AT + runs]))
        uneven = one_label(seed, (0.03, 0.05))
        for member in uneven:
            member.values[SHIFT_AT:] *= 1.15 if member.key["iteration"] in (3, 4) else 1.0
        apart = moves(uneven)
        assert pooled._moved_together(apart, 1.0, settings) == {}
        assert pooled._one_move(apart)[1] < pooled.APART_P
        for label_moves, label in ((even, members), (apart, uneven)):  # each move from numpy, Q's p from scipy
            shifts = np.array([m.values[SHIFT_AT:SHIFT_AT + runs].mean() / m.values[SHIFT_AT - runs:SHIFT_AT].mean() - 1
                               for m in label])
            assert [move[1] for move in label_moves] == pytest.approx(shifts)
            weights = np.array([move[2] for move in label_moves]) ** -2.0
            mean = np.average(shifts, weights=weights)
            assert pooled._one_move(label_moves) == pytest.approx(
                (mean, stats.chi2.sf(np.sum(weights * (shifts - mean) ** 2), len(label) - 1)))
        assert pooled._label_member_p(apart, pooled.MEMBER_P * pooled.SETTLED_P) == pytest.approx(
            pooled.MEMBER_P * pooled.APART_MEMBER_P)
    for q, df in ((3.2, 7), (14.07, 7), (0.5, 1), (40.0, 12)):
        assert homogeneity_p(q, df) == pytest.approx(stats.chi2.sf(q, df))


def test_sixty_nights_like_the_issue():
    """Issue 21's kind of history (synthetic.py): shifted series x night items found at +-1 night, in the right
    direction, by the per-series detection and the groups together, 5 seeds."""
    items, found, false, settled, alone = 0, 0, [], [], 0
    for seed in range(5):
        history = sixty_nights(seed)
        changes = detect_history(history)
        result = score(history, changes)
        items, found, false = items + result.items, found + result.found, false + result.false
        waiting = {(series_id(s.key), history.nights[s.key["plan_id"]][c.index]) for s, c, _ in changes if c.pending}
        settled += [f for f in result.false if f not in waiting]
        alone += score(history, [(s, c, "series") for s in history.series
                                 for c in detect(s.values, calls=s.calls if s.key["metric"] == "error_rate" else None)
                                 ]).found
    assert found >= 96 / 112 * items, (found, items)
    assert found > alone
    # what these 5 seeds give (docs/history.md, "How well it does"; bench/history_sixty.py classifies them):
    # 1 settled (the issue: at most 1 a history), none pending; 1 and 2 before the four rules of 2026-12-05's
    # afternoon, 2 and 2 before the five rules of 2026-12-05's morning, 3 and 2 before OTHERS_RUNS and MOVE_RUNS 4 (2026-12-05), 4 and 2 before
    # the four rules measured on held-out seeds (2026-12-04), 10 and 3 before the placing and naming rules
    assert len(settled) <= 1, settled
    assert len(false) <= 1, false


@pytest.mark.parametrize(("seed", "member", "own_guess"), [
    # label B's +6 % at night 22, found by its group; server iteration 2 alone puts it at night 20. The group's other
    # members moved at 22, but iteration 1's improvement at night 15 (two of them, which the group did not find)
    # lowers the median of the whole segment before 22: read over OTHERS_RUNS runs on each side, they moved
    (713, ("A", "server", "(all)", 2, "B", "p95_ms"), range(19, 22)),
    # the same shift put at night 17 by client iteration 2's p50 alone: four runs before (night 19 failed, in no
    # series), which MOVE_RUNS (4) reaches
    (749, ("A", "client", "(all)", 2, "B", "p50_ms"), range(16, 22)),
])
def test_a_members_own_guess_of_its_groups_shift_moves_to_the_groups_run(seed, member, own_guess):
    """Seeds of the sixty nights where a member alone placed label B's shift off and its group places it right: the
    member's change is the group's, at night 22 (the truth), and none is left at its own guess."""
    history = sixty_nights(seed)
    changes = [(history.nights["A"][c.index], by) for s, c, by in detect_history(history)
               if c.kind == "change" and series_id(s.key) == member]
    assert (22, "label B: 8 series") in changes, changes
    assert not [night for night, _ in changes if night in own_guess], changes


def test_a_groups_shift_a_smaller_shift_of_one_iteration_hid_is_found_between_them():
    """Seed 791 of the sixty nights: iteration 1's improvement at night 15 (2 of label B's 8 series, found by both
    alone) mixes two levels into the segment of label B's +6 % at night 22 in the group's series, and its split step
    does not come to it. Bounded at night 15, the group finds it and names 4 of its members at night 22; client
    iteration 2 alone put it at night 25, and that change is gone."""
    history = sixty_nights(791)
    changes = [(s.key["side"], s.key["iteration"], history.nights["A"][c.index], by) for s, c, by in detect_history(history)
               if c.kind == "change" and s.key["label"] == "B" and s.key["metric"] == "p95_ms" and s.key["plan_id"] == "A"]
    named = [(side, iteration) for side, iteration, night, by in changes if night == 22 and by == "label B: 8 series"]
    assert len(named) >= 4, changes  # none before the rule
    assert not [c for c in changes if c[2] in (24, 25, 26)], changes


def test_a_groups_shift_is_placed_where_its_segments_fit_best_not_where_e_divisive_split_it(monkeypatch):
    """Seed 1209: label B's p50 rose 6 % at night 22, which moves `(all)`'s p50 by B's share of the calls (2.6-2.7 %,
    under an item's 5 %). The `(all)` group's values split (E-divisive, which compares a few runs on each side) at 22
    and named 4 members there, while server iteration 3 kept its own change at 24: a false change. Placed where its
    two segments fit best (`changepoints.placed`), the shift is at 23, a night from the truth, and takes server
    iteration 3's change with 4 other members: no false change in plan A."""
    from tasks.history import pooled

    history = sixty_nights(1209)
    every = [s for s in history.series if s.key["plan_id"] == "A" and s.key["label"] == "(all)"
             and s.key["metric"] == "p50_ms"]
    assert all(0.025 < history.moves[series_id(s.key)][22] < 0.028 for s in every)

    def nights() -> tuple[list[tuple[str, int, int, str]], int]:
        changes = detect_history(history)
        found = sorted((s.key["side"], s.key["iteration"], history.nights["A"][c.index], by) for s, c, by in changes
                       if s in every and c.kind == "change" and 18 <= history.nights["A"][c.index] <= 27)
        return found, len([f for f in score(history, changes).false if f[0][0] == "A"])

    group = "(all): 8 series"
    assert nights() == ([("client", 2, 23, group), ("client", 3, 23, group), ("server", 1, 23, group),
                         ("server", 3, 23, group), ("server", 4, 23, group)], 0)
    monkeypatch.setattr(pooled, "placed", lambda values, changes, fixed, settings: changes)
    monkeypatch.setattr(pooled, "_twins", lambda series: {})  # else its twins move server iteration 3's change to 22
    assert nights() == ([("client", 2, 22, group), ("client", 3, 22, group), ("server", 1, 22, group),
                         ("server", 3, 24, "series"), ("server", 4, 22, group)], 1)


def test_a_members_move_is_compared_at_its_groups_run_not_at_its_own_change(monkeypatch):
    """Seed 1205: label C's p95 rose 9 % at night 36 and label B's 6 % at 22. Members whose own change lay a few runs
    from their group's run move there when the group's other members moved at least MOVE_SHARE of the member's move
    at the group's run (`_others_moved`). Compared with the member's own change instead (at another run, a different
    size), the others' shift fell short for 4 members: label C's group named none of client iterations 2 and 4 and
    server iteration 4 at 36, nor label B's server iteration 4 at 22, and the history found 4 items fewer, no false
    change either way. (The rule was read on seed 1271, where the two ways now agree.) 143 of 152 found: label B's p95
    at 22 moved less on the client side than on the server (means of nights 15-21 and 22-27 of the raw values: +0.5
    to +5.1 % against +3.3 to +8.5 %), not one move at APART_P, and client iterations 1 and 4 are not named at
    MEMBER_P x APART_MEMBER_P (145 before)."""
    from tasks.history import pooled

    history = sixty_nights(1205)
    keys = {("A", side, "(all)", iteration, label, "p95_ms"): night
            for side, iteration, label, night in (("client", 2, "C", 36), ("client", 4, "C", 36),
                                                  ("server", 4, "C", 36), ("server", 4, "B", 22))}
    assert all(night in history.moves[key] for key, night in keys.items())

    def named() -> tuple[int, int, int]:
        changes = detect_history(history)
        result = score(history, changes)
        at_runs = sum(1 for s, c, by in changes if c.kind == "change" and series_id(s.key) in keys
                      and history.nights["A"][c.index] == keys[series_id(s.key)] and by.startswith("label "))
        return at_runs, result.found, len(result.false)

    assert named() == (4, 143, 0)
    compare_own = pooled._others_moved

    def own_change_compared(members, clean, member, span, move, settings, residual, share=pooled.MOVE_SHARE):
        own = min((c for c in member.changes if c.kind == "change" and abs(int(member.positions[c.index]) - span[1])
                   <= pooled.MOVE_RUNS), key=lambda c: abs(int(member.positions[c.index]) - span[1]))
        return compare_own(members, clean, member, span, own, settings, residual, share)

    monkeypatch.setattr(pooled, "_others_moved", own_change_compared)
    assert named() == (0, 139, 0)


def test_a_member_moved_half_a_broad_shift_of_its_groups_values_is_named_however_far_one_member_moved_alone(
        monkeypatch):
    """Seed 1202 at 3-5 % noise: label C's p95 rose 9 % at night 36. Client iteration 1 found it alone at +19.6 %
    (the noise that pushed it over its threshold), the group's values at +9.1 %; server iterations 2 and 3 moved
    +9.0 % and +5.5 % at the group's run (p 0.0014 and 0.0007) and have no change of their own. They are named once
    they moved MOVE_SHARE of the smaller of the two (`_least_move`); against half of 19.6 % neither was, and the history
    found 4 items fewer (136 of 152 against 140), no false change either way."""
    from tasks.history import pooled

    history = sixty_nights(1202, (0.03, 0.05))
    keys = {("A", "server", "(all)", iteration, "C", "p95_ms") for iteration in (2, 3)}
    assert all(36 in history.moves[key] for key in keys)

    def named() -> tuple[int, int, int]:
        changes = detect_history(history)
        result = score(history, changes)
        at_36 = sum(1 for s, c, by in changes if c.kind == "change" and series_id(s.key) in keys
                    and history.nights["A"][c.index] == 36 and by.startswith("label C"))
        return at_36, result.found, len(result.false)

    assert named() == (2, 140, 0)
    monkeypatch.setattr(pooled, "_least_move", lambda alone, shift, settings: pooled.MOVE_SHARE * alone)
    assert named() == (0, 136, 0)


def test_half_a_broad_shift_names_a_member_only_if_its_other_side_moved_too(monkeypatch):
    """Seed 1317: iterations 3 and 4 rose 15 % at night 8, and `(all)`'s p50 group found it (+6.8 % in its values:
    broad). Client iteration 1, which did not move, showed +3.9 % there (p 0.00049), over half the group's shift and
    under half of the +18.7 % of the members that found it alone; its server side did not move, and it is not named
    (`_other_side_moved`). Without that question it was, a false change, and no item more. (Server iteration 1's label
    B p95 was too, in label B's p95 group, whose p50 group had settled night 8, until a label's members that did not
    move as one named a member only at MEMBER_P x APART_MEMBER_P, `_label_member_p`. Seed 1353, this test's until the
    siblings' runs, names no member there either way since.)"""
    from tasks.history import pooled

    history = sixty_nights(1317)
    key = ("A", "client", "(all)", 1, "(all)", "p50_ms")
    assert 8 not in history.moves.get(key, {})

    def result() -> tuple[int, list]:
        scored = score(history, detect_history(history))
        return scored.found, scored.false

    assert result() == (151, [])
    monkeypatch.setattr(pooled, "_other_side_moved", lambda *args: True)
    assert result() == (151, [(key, 8)])


def test_a_shift_a_sibling_group_settled_is_tested_at_its_run_alone(monkeypatch):
    """Seed 1275 at 3-5 % noise: label C's latency rose 9 % at night 36 in all its series. The p50 groups settled it,
    and the p95 groups after them test the runs their siblings settled (`_siblings_runs`): server iteration 1's p95
    group found iteration 1's improvement at night 15 that way, `(all)`'s its part of label B's +6 % at 22, client
    iteration 1's label C's rise at 36 (+4.0 %, p 0.0015). With those shifts in the side's other series, label C's p95
    group places its own a night earlier: six of its members are named at night 37, within a night of the truth, and
    the history finds 141 of its 152 items with no false change. Without the siblings' runs (SIBLING_P 0) they were named
    at 38: 7 false changes, 133 items."""
    from tasks.history import pooled

    history = sixty_nights(1275, (0.03, 0.05))
    label_c = {series_id(s.key) for s in history.series if s.key["plan_id"] == "A" and s.key["label"] == "C"
               and s.key["metric"] == "p95_ms"}
    assert all(abs(history.moves[key][36] - 0.09) < 1e-9 for key in label_c)

    def result() -> tuple[int, int, list[int]]:
        changes = detect_history(history)
        scored = score(history, changes)
        nights = sorted(history.nights["A"][c.index] for s, c, by in changes if series_id(s.key) in label_c
                        and c.kind == "change" and 33 < history.nights["A"][c.index] < 41 and by.startswith("label C"))
        return scored.found, len(scored.false), nights

    assert result() == (141, 0, [37] * 6)
    monkeypatch.setattr(pooled, "SIBLING_P", 0.0)
    assert result() == (133, 7, [38] * 6)


def test_a_shift_of_a_groups_values_its_sibling_settled_names_members_no_member_found_alone(monkeypatch):
    """Seed 1382 at 3-5 % noise: label B's latency rose 6 % at night 22 in all its series. Its p50 group settled it
    there; its p95 group's values split there too, but none of its 8 members had found it alone, and such a shift
    names no member. A sibling's shift at that run stands for one (`_sibling_settled`): the 8 members' moves there are
    one move (`_moved_together`), all 8 are named at night 22, and the history finds 142 of its 152 items with no false
    change. Each member's own test alone (TOGETHER_P above any p) names client iterations 1, 2 and 4 and server
    iterations 1, 3 and 4 (141 found); server iteration 1 at MEMBER_P x SETTLED_P, not at a label's usual
    LABEL_VALUES_P (140). Without the sibling's shift, no p95 member is named there, and 134 are found."""
    from tasks.history import pooled

    history = sixty_nights(1382, (0.03, 0.05))
    label_b = {series_id(s.key) for s in history.series if s.key["plan_id"] == "A" and s.key["label"] == "B"
               and s.key["metric"] == "p95_ms"}
    assert all(abs(history.moves[key][22] - 0.06) < 1e-9 for key in label_b)

    def result() -> tuple[int, int, list[tuple[str, int]]]:
        changes = detect_history(history)
        scored = score(history, changes)
        named = sorted((s.key["side"], s.key["iteration"]) for s, c, by in changes if series_id(s.key) in label_b
                       and c.kind == "change" and history.nights["A"][c.index] == 22 and by == "label B: 8 series")
        return scored.found, len(scored.false), named

    assert result() == (142, 0, [(side, iteration) for side in ("client", "server") for iteration in (1, 2, 3, 4)])
    monkeypatch.setattr(pooled, "TOGETHER_P", 2.0)
    assert result() == (141, 0, [("client", 1), ("client", 2), ("client", 4), ("server", 1), ("server", 3),
                                 ("server", 4)])
    monkeypatch.setattr(pooled, "SETTLED_P", pooled.LABEL_VALUES_P)
    assert result() == (140, 0, [("client", 1), ("client", 2), ("client", 4), ("server", 3), ("server", 4)])
    monkeypatch.setattr(pooled, "_sibling_settled", lambda at, direction, hints: False)
    assert result() == (134, 0, [])


def test_a_members_own_change_at_a_run_its_group_claimed_is_not_moved_to_the_groups_other_split(monkeypatch):
    """Seed 1213: iteration 2's client labels rose 12 % in p95 at night 29, label C 9 % more at 36. Label B found 29
    alone, a run its iteration's group claimed; the group's values split again at 34, where the values' pass moved B's
    own change: a false change, and 29 lost. An own change at a run the group claimed stays (`_claimed`). (The rule
    was read on seed 1531, whose group now places label C's shift at 36 in both passes.)"""
    from tasks.history import pooled

    history = sixty_nights(1213)
    key = ("A", "client", "(all)", 2, "B", "p95_ms")
    assert {n: round(m, 2) for n, m in history.moves[key].items() if 20 <= n < 40} == {22: 0.06, 29: 0.12}

    def label_b() -> tuple[list[tuple[int, str]], int]:
        changes = detect_history(history)
        found = sorted((history.nights["A"][c.index], by) for s, c, by in changes
                       if series_id(s.key) == key and c.kind == "change" and 27 <= history.nights["A"][c.index] <= 40)
        return found, len(score(history, changes).false)

    assert label_b() == ([(29, "series")], 0)
    monkeypatch.setattr(pooled, "_claimed", lambda member, own, runs: False)
    assert label_b() == ([(34, "iteration 2 client: 3 labels")], 1)


def test_a_shift_of_a_groups_values_between_its_members_own_shifts_names_no_member(monkeypatch):
    """Seed 1310: label A's p95 group split its values at night 39 (+4.6 %), between its members' shifts at 29 and
    the drift from 42, which server iteration 3 had found alone 3 runs away but no member within FOUND_RUNS. Named
    there, server iteration 4's label A then went with its iteration's group to 36, where only label C rose: a false
    change. Named only when a member found it within FOUND_RUNS, the group names none. (The rule was read on seeds
    1618, 1733 and 1267, where the groups now split elsewhere or name their members' own runs.)"""
    from tasks.history import pooled

    history = sixty_nights(1310)
    key = ("A", "server", "(all)", 4, "A", "p95_ms")
    assert sorted(n for n in history.moves[key] if n < 42) == [8, 29]

    def label_a() -> tuple[list[tuple[int, str]], int]:
        changes = detect_history(history)
        found = sorted((history.nights["A"][c.index], by) for s, c, by in changes
                       if series_id(s.key) == key and c.kind == "change" and 30 <= history.nights["A"][c.index] <= 41)
        return found, len(score(history, changes).false)

    assert label_a() == ([], 0)
    monkeypatch.setattr(pooled, "FOUND_RUNS", pooled.MOVE_RUNS)
    assert label_a() == ([(36, "iteration 4 server: 3 labels")], 1)


def test_a_small_groups_shift_is_placed_where_a_majority_of_its_members_found_it_alone(monkeypatch):
    """Seed 1624: iteration 1's p95 fell 12 % at night 15 on labels A and B (not C). On the client both found it alone
    at 15; their iteration's group (3 labels) split its values at 13 and moved B there: a false change. Two of three
    members at one run place the group's shift there: both keep night 15, and the history's one false change is
    elsewhere (label B's p95 of client iteration 3 at night 17). Without the rule the group claims 13 and names B there
    (before the twins' rule A's own change followed it, `_toward_claims`; its twins, which fell at 15, keep it there
    now, `_twins_preference`): 2 false changes. (Seed
    1672, this test's until the siblings' runs, loses B's change at 15 with them, and the rule no longer shows there.)"""
    from tasks.history import pooled

    history = sixty_nights(1624)
    assert {label: round(history.moves[("A", "client", "(all)", 1, label, "p95_ms")].get(15, 0), 2)
            for label in "ABC"} == {"A": -0.12, "B": -0.12, "C": 0}

    def client_1() -> tuple[list[tuple[str, int]], int]:
        changes = detect_history(history)
        found = sorted((s.key["label"], history.nights["A"][c.index]) for s, c, by in changes
                       if s.key["plan_id"] == "A" and s.key["side"] == "client" and s.key["iteration"] == 1
                       and s.key["label"] in ("A", "B") and s.key["metric"] == "p95_ms" and c.kind == "change"
                       and 12 <= history.nights["A"][c.index] <= 18)
        return found, len(score(history, changes).false)

    assert client_1() == ([("A", 15), ("B", 15)], 1)
    monkeypatch.setattr(pooled, "_consensus", lambda members: pooled.CONSENSUS_MEMBERS)
    assert client_1() == ([("A", 15), ("B", 13)], 2)


def test_a_groups_shift_is_placed_where_most_of_its_members_found_it_alone():
    """Seed 1269 of the sixty nights: label C's +9 % at night 36. Four of its 8 p95 series found it alone at 36; the
    group's series, high at night 38, splits there, and moved them to 38 (6 false changes). Placed at the members' run,
    6 of the 8 have it at night 36, and only server iteration 3 keeps its own 38."""
    history = sixty_nights(1269)
    nights = [(history.nights["A"][c.index], s.key["side"], s.key["iteration"]) for s, c, _ in detect_history(history)
              if c.kind == "change" and s.key["label"] == "C" and s.key["metric"] == "p95_ms" and s.key["plan_id"] == "A"]
    assert len([n for n in nights if n[0] == 36]) >= 6, nights  # the truth; none before the rule
    assert len([n for n in nights if n[0] in (37, 38, 39)]) <= 1, nights  # 6 before the rule


def test_members_own_changes_near_one_run_move_to_where_their_groups_values_split():
    """Seed 1254 of the sixty nights: label B's group does not claim its +6 % at night 22, but 4 of its p95 series
    found it alone at nights 20-23 (server iterations 2 and 4, client 2: 22-23; server 3: 20). The group's values split
    best at night 22, and server iteration 3's change moves there."""
    history = sixty_nights(1254)
    changes = [(history.nights["A"][c.index], by) for s, c, by in detect_history(history)
               if c.kind == "change" and series_id(s.key) == ("A", "server", "(all)", 3, "B", "p95_ms")]
    assert (22, "label B: 8 series") in changes, changes
    assert not [night for night, _ in changes if night in (19, 20, 21, 23, 24, 25)], changes


def test_a_small_groups_shift_is_placed_at_its_members_run_not_at_its_values_later_split(monkeypatch):
    """Seed 1235: iteration 3's server labels rose 12 % in p95 at night 29, label C 9 % more at 36. Labels A and B found
    29 alone (A's own change taken by its label's group there); the iteration's group split its values at 34, between
    the two shifts, and named A and B there: 2 false changes, 29 lost for both. At the run its members found alone
    (`_members_run`: the median run of theirs, for a group of 3 when 2 agree) the group claims nothing new. (With the
    families' pooled groups on, `_joint_claims`, the path without the rule finds 29 too: they are switched off with it
    to show the rule alone.)"""
    from tasks.history import pooled

    history = sixty_nights(1235)
    keys = {label: ("A", "server", "(all)", 3, label, "p95_ms") for label in "AB"}
    assert {label: sorted(n for n in history.moves[key] if 20 <= n < 42) for label, key in keys.items()} == {
        "A": [29], "B": [22, 29]}

    def nights() -> tuple[list[tuple[str, int, str]], int]:
        changes = detect_history(history)
        found = sorted((s.key["label"], history.nights["A"][c.index], by) for s, c, by in changes
                       if series_id(s.key) in keys.values() and c.kind == "change"
                       and 27 <= history.nights["A"][c.index] <= 40)
        return found, len(score(history, changes).false)

    assert nights() == ([("A", 29, "label A: 8 series"), ("B", 29, "series")], 0)
    monkeypatch.setattr(pooled, "_members_run", lambda members, at, shift, first, last: at)
    monkeypatch.setattr(pooled, "_joint_claims", lambda named_groups, sides, settings: {})
    group = "iteration 3 server: 3 labels"
    assert nights() == ([("A", 34, group), ("B", 34, group)], 2)


def test_a_members_own_change_at_its_groups_shift_stays_when_its_other_changes_are_retested(monkeypatch):
    """Seed 1212: client iteration 1's label B p95 found iteration 1's -12 % at night 15 alone, where its groups found
    it too. Retested with its other own changes at the stricter `ALONE_P`, it was placed again and went to 17: a false
    change, 15 lost. At its group's run (`Series.confirmed`) it is a bound of the retest and stays. (The rule was read
    on seed 1261, whose label C group no longer names client iteration 3 at night 36.) Without the rule, the last step
    (`_toward_claims`) would move 17 back to its groups' 15: it is switched off too, to show this rule alone."""
    from tasks.history import pooled

    history = sixty_nights(1212)
    key = ("A", "client", "(all)", 1, "B", "p95_ms")
    assert {n: round(m, 2) for n, m in history.moves[key].items() if n < 29} == {15: -0.12, 22: 0.06}

    def nights() -> tuple[list[int], int]:
        changes = detect_history(history)
        found = [history.nights["A"][c.index] for s, c, _ in changes if series_id(s.key) == key and c.kind == "change"]
        return found, len(score(history, changes).false)

    assert nights() == ([15, 22, 29], 0)
    found_by_groups = pooled.pooled_changes

    def none_confirmed(members, *args, **kwargs):
        moves = found_by_groups(members, *args, **kwargs)
        for member in members:
            member.confirmed = set()
        return moves

    monkeypatch.setattr(pooled, "pooled_changes", none_confirmed)
    assert nights() == ([15, 22, 29], 0)
    monkeypatch.setattr(pooled, "_toward_claims", lambda *args: None)
    assert nights() == ([17, 22, 29], 1)


def test_a_shift_most_members_missed_inside_the_segments_they_share_is_found_by_their_residuals(monkeypatch):
    """Seed 1200: label B's p95 rose 6 % at night 22 in all 8 series (the generator's truth), between shifts at 8 and
    29 most of them found alone; no series found 22 alone and the group's split step refused its first candidate.
    Searched inside the segments its members share (at p_value x INSIDE_P), the residuals' rise names all 8 a night
    late, at 23 (found: the scores take a night either way), and nothing else is claimed; with INSIDE_P at 0, none."""
    from tasks.history import pooled

    history = sixty_nights(1200)
    label_b = [s for s in history.series if s.key["plan_id"] == "A" and s.key["label"] == "B"
               and s.key["metric"] == "p95_ms"]
    assert all(abs(history.moves[series_id(s.key)][22] - 0.06) < 1e-9 for s in label_b)

    def named_at_23() -> list[tuple[str, int]]:
        changes = detect_history(history)
        assert score(history, changes).false == []
        return sorted((s.key["side"], s.key["iteration"]) for s, c, by in changes
                      if s in label_b and c.kind == "change" and history.nights["A"][c.index] == 23
                      and by == "label B: 8 series")

    assert named_at_23() == [(side, iteration) for side in ("client", "server") for iteration in (1, 2, 3, 4)]
    monkeypatch.setattr(pooled, "INSIDE_P", 0.0)
    assert named_at_23() == []


LABEL_B_P95_AT_23 = [(side, iteration, 23) for side in ("client", "server") for iteration in (1, 2, 3, 4)]


def _label_b_p95_near_22(seed: int) -> tuple[int, int, list[tuple[str, int, int]]]:
    """Seed's history at 3-5 % noise, detected: items found, false changes, and label B's p95 change points at nights
    21-23 (side, iteration, night); first checks that all 8 rose 6 % at 22 (the generator's truth)."""
    history = sixty_nights(seed, (0.03, 0.05))
    label_b = {series_id(s.key) for s in history.series if s.key["plan_id"] == "A" and s.key["label"] == "B"
               and s.key["metric"] == "p95_ms"}
    assert len(label_b) == 8 and all(abs(history.moves[key][22] - 0.06) < 1e-9 for key in label_b)
    changes = detect_history(history)
    scored = score(history, changes)
    near = sorted((s.key["side"], s.key["iteration"], history.nights["A"][c.index]) for s, c, _ in changes
                  if series_id(s.key) in label_b and c.kind == "change" and 21 <= history.nights["A"][c.index] <= 23)
    return scored.found, len(scored.false), near


def test_a_labels_residuals_shift_names_members_wherever_their_own_values_split_best(monkeypatch):
    """Seed 1200 at 3-5 % noise: label B's p95 residuals rose at night 23 (its +6 % at 22), which its p50 group settled.
    A member the residuals' shift names need not split best near it alone (`_member_change`'s `free_p`, `_free_p`, in a
    label's residuals): all 8 members are named at 23 and 145 of 152 are found, no false change. Asking for the
    agreement, 5 and 142: client iteration 2 (+4.2 %, p 0.026) splits best at night 4 alone."""
    from tasks.history import pooled

    assert _label_b_p95_near_22(1200) == (145, 0, LABEL_B_P95_AT_23)
    member_change = pooled._member_change
    monkeypatch.setattr(pooled, "_member_change",
                        lambda member, values, span, direction, settings, free_p=0.0, member_p=pooled.MEMBER_P:
                        member_change(member, values, span, direction, settings, 0.0, member_p))
    assert _label_b_p95_near_22(1200) == (142, 0, [("client", 1, 23), ("client", 3, 23), ("client", 4, 23),
                                                   ("server", 2, 23), ("server", 3, 23)])


def test_a_labels_members_are_named_at_a_looser_p_at_a_run_its_sibling_settled(monkeypatch):
    """Seed 1200 at 3-5 % noise: label B's +6 % at night 22, settled by its p50 group; its p95 group's residuals rose at
    23. Each p95 member's own test there is only asked p <= MEMBER_P x SETTLED_P (0.2): two groups of the label placed
    the shift, and every member of a label moves with its code. All 8 are named, 145 of 152 found, no false change. At
    MEMBER_P (SETTLED_P 1) client iterations 1 and 3 and server iteration 1 were not: 5 named and 142 found."""
    from tasks.history import pooled

    assert _label_b_p95_near_22(1200) == (145, 0, LABEL_B_P95_AT_23)
    monkeypatch.setattr(pooled, "SETTLED_P", 1.0)
    assert _label_b_p95_near_22(1200) == (142, 0, [("client", 2, 23), ("client", 4, 23), ("server", 2, 23),
                                                   ("server", 3, 23), ("server", 4, 23)])


def test_a_labels_member_sure_of_a_shift_its_sibling_settled_is_named_wherever_its_own_values_split_best(monkeypatch):
    """Seed 1219 at 3-5 % noise: label B's +6 % at night 22 and label C's +9 % at 36, each settled by the label's p50 and
    p95 groups. Server iteration 4's label B p95 (+9.6 %, p 0.005) and client iteration 4's label C p95 (+7.8 %, p
    0.001) moved with them but split best elsewhere over their long segments alone: at p <= AGREE_P they are named at
    the group's run, and the history finds 138 of its 152 items with no false change. Asking every member for the
    agreement, 137: server iteration 4's label B p95 is not named at 22; client iteration 4's label C p95 still is at 36,
    as one move with its label's other members (`_moved_together`). Without that too, neither, and 134 (the third item:
    client iteration 1's label B p50 at night 15, then placed otherwise)."""
    from tasks.history import pooled

    history = sixty_nights(1219, (0.03, 0.05))

    def result() -> tuple[int, list, list]:
        changes = detect_history(history)
        scored = score(history, changes)
        named = sorted((s.key["side"], s.key["iteration"], s.key["label"], history.nights["A"][c.index])
                       for s, c, by in changes if c.kind == "change" and s.key["plan_id"] == "A"
                       and s.key["metric"] == "p95_ms" and s.key["iteration"] == 4 and by.startswith("label")
                       and (s.key["label"], history.nights["A"][c.index]) in {("B", 22), ("C", 36)})
        return scored.found, scored.false, named

    for side, label, night in (("server", "B", 22), ("client", "C", 36)):
        assert history.moves[("A", side, "(all)", 4, label, "p95_ms")][night] > 0.05
    found, false, named = result()
    assert (found, false) == (138, [])
    assert {("server", 4, "B", 22), ("client", 4, "C", 36)} <= set(named)
    monkeypatch.setattr(pooled, "AGREE_P", 0.0)
    found, false, named = result()
    assert (found, false) == (137, [])
    assert ("server", 4, "B", 22) not in named and ("client", 4, "C", 36) in named
    monkeypatch.setattr(pooled, "TOGETHER_P", 2.0)
    found, false, named = result()
    assert (found, false) == (134, [])
    assert not {("server", 4, "B", 22), ("client", 4, "C", 36)} & set(named)


def test_a_labels_members_that_did_not_move_as_one_name_a_member_only_at_a_stricter_p(monkeypatch):
    """Seed 1234 at 3-5 % noise: iteration 1's p95 of label A fell 12 % at night 15 (its truth; numpy, means of nights
    9-14 without the outlier night and 15-20: -14 % and -12 %), the label's other iterations did not move, and its
    group settled the shift there. The members' moves there are not one move (p < APART_P), so a member's own test
    names it only at MEMBER_P x APART_MEMBER_P (`_label_member_p`): server iteration 3 (-8 %, p 0.037) is not named,
    142 of 152 found, no false change. Named at MEMBER_P x SETTLED_P as before (APART_P 0), it is a false change; and
    one item more is found, the same series' +15 % at night 8, which its group named at p 0.0031 in a short segment."""
    from tasks.history import pooled

    history = sixty_nights(1234, (0.03, 0.05))
    key = ("A", "server", "(all)", 3, "A", "p95_ms")
    assert 15 not in history.moves[key]
    nights = np.array(history.nights["A"])
    for s in history.series:
        if s.key["plan_id"] == "A" and s.key["label"] == "A" and s.key["metric"] == "p95_ms":
            before, after = s.values[(nights >= 9) & (nights < 15) & (nights != OUTLIER)], s.values[
                (nights >= 15) & (nights <= 20)]
            moved = after.mean() / before.mean() - 1
            truth = round(history.moves[series_id(s.key)].get(15, 0.0), 6)
            assert (truth, bool(moved < -0.1)) in ((-0.12, True), (0.0, False)), (s.key, moved)

    def scored() -> tuple[int, list[tuple]]:
        result = score(history, detect_history(history))
        return result.found, result.false

    assert scored() == (142, [])
    monkeypatch.setattr(pooled, "APART_P", 0.0)
    assert scored() == (143, [(key, 15)])


def test_all_labels_members_that_did_not_move_as_one_name_a_member_only_at_a_stricter_p_too(monkeypatch):
    """Seed 1288 at 3-5 % noise: `(all)`'s iteration 1 fell at night 15 (labels A and B -12 %, C not: the truth
    -10.7 %), its other iterations did not move. `(all)`'s groups are asked whether their members moved as one too
    (not to name members that did, `_moved_together`): server iteration 3's p50 (-5.3 % at 16, p 0.011) and client
    iteration 4's p95 (-4.8 % at 15, p 0.018) are not named, and one false change is left (label A's server iteration 3
    p50 at 15, p 0.00074, under MEMBER_P x APART_MEMBER_P); with `APART_P` 0 all three, 131 of 152 found either way."""
    from tasks.history import pooled

    history = sixty_nights(1288, (0.03, 0.05))
    moved = {series_id(s.key): history.moves[series_id(s.key)].get(15, 0.0) for s in history.series
             if s.key["plan_id"] == "A" and s.key["label"] == "(all)" and s.key["metric"] in ("p50_ms", "p95_ms")}
    assert all(round(move, 3) == (-0.107 if key[3] == 1 else 0.0) for key, move in moved.items())
    label_a = (("A", "server", "(all)", 3, "A", "p50_ms"), 15)
    all_of = [(("A", "client", "(all)", 4, "(all)", "p95_ms"), 15), (("A", "server", "(all)", 3, "(all)", "p50_ms"), 16)]

    def scored() -> tuple[int, list[tuple]]:
        result = score(history, detect_history(history))
        return result.found, sorted(result.false)

    assert scored() == (131, [label_a])
    monkeypatch.setattr(pooled, "APART_P", 0.0)
    assert scored() == (131, sorted([label_a, *all_of]))


def test_a_members_own_change_at_its_groups_run_is_confirmed_only_where_the_others_moved_too(monkeypatch):
    """Seed 1212 at 3-5 % noise: server iteration 1's label B p50 rose 7.5 % at night 27 by its noise (its true moves:
    -12 % at 15, +6 % at 22), and its iteration's group of p50s split there by that one label; labels A and C moved
    +0.5 % and -4.7 % (medians of nights 22-26 and 27-32, numpy). Confirmed by that group, the change kept its p_value
    at the strict retest: a false change. Confirmed only where the others moved a quarter of its move (`_confirmed`,
    CONFIRM_SHARE), it is retested at ALONE_P and dropped: 145 of 152 found either way."""
    from tasks.history import pooled

    history = sixty_nights(1212, (0.03, 0.05))
    b = ("A", "server", "(all)", 1, "B", "p50_ms")
    assert 27 not in history.moves[b]
    nights = np.array(history.nights["A"])
    moved = {}
    for s in history.series:
        if series_id(s.key)[:4] == b[:4] and s.key["metric"] == "p50_ms" and s.key["label"] != "(all)":
            before, after = s.values[(nights >= 22) & (nights < 27)], s.values[(nights >= 27) & (nights < 33)]
            moved[s.key["label"]] = np.median(after) / np.median(before) - 1
    assert moved["B"] > 0.07 and all(moved[label] < pooled.CONFIRM_SHARE * moved["B"] for label in "AC")

    def scored() -> tuple[int, list[tuple]]:
        result = score(history, detect_history(history))
        return result.found, result.false

    assert scored() == (145, [])

    def at_the_run(members, clean, member, span, direction, settings, residual):
        return {c.index for c in member.changes if c.kind == "change" and c.change_pct is not None
                and int(member.positions[c.index]) == span[1] and np.sign(c.change_pct) == direction}

    monkeypatch.setattr(pooled, "_confirmed", at_the_run)
    assert scored() == (145, [(b, 27)])


def test_a_run_where_one_iteration_changed_alone_is_the_groups_shift_when_the_others_moved_too(monkeypatch):
    """Seed 1201 at 3-5 % noise: iteration 1's two p95 series of label B found its +6 % at night 22 alone, which made
    22 a bound of the group's segments (`_subgroup_runs`), never tested as its shift. The other six moved +5.7 % there
    (p 1e-4): tested at that run (`_shared_subgroup_runs`), it is the group's shift, client iteration 3 is named and
    iteration 1's own changes are kept, 135 of 152 found, no false change. As a bound only, none of label B's p95 series
    has a change at 21-23 and 132 are found: iteration 1's own changes there are no longer confirmed by a group whose
    other members moved there too (`_confirmed`: its iteration's labels A and C did not); 131 without the families'
    pooled groups (`_joint_claims`)."""
    from tasks.history import pooled

    assert _label_b_p95_near_22(1201) == (135, 0, [("client", 1, 22), ("client", 3, 22), ("server", 1, 22)])
    monkeypatch.setattr(pooled, "_shared_subgroup_runs", lambda *args: [])
    assert _label_b_p95_near_22(1201) == (132, 0, [])
    monkeypatch.setattr(pooled, "_joint_claims", lambda named_groups, sides, settings: {})
    assert _label_b_p95_near_22(1201) == (131, 0, [])


def test_a_groups_values_shift_two_runs_from_its_siblings_run_moves_there(monkeypatch):
    """Seed 1315 at 3-5 % noise: label B's +6 % at night 22, settled there by its p50 group; its p95 group's values
    split at 24, where it named server iteration 2 and client iteration 3: 2 false changes. Moved to the sibling's run,
    where the group's series still steps (`_toward_siblings`), the shift names none of them there, and the history
    finds 142 of 152 items. Left at 24 (the family's pooled groups settled night 23), the label's members there are one
    move (`_moved_together`) and four are named: 136 items, 4 false changes (without that naming, 134 and the two)."""
    from tasks.history import pooled

    history = sixty_nights(1315, (0.03, 0.05))
    label_b = {series_id(s.key) for s in history.series if s.key["plan_id"] == "A" and s.key["label"] == "B"
               and s.key["metric"] == "p95_ms"}
    assert all(abs(history.moves[key][22] - 0.06) < 1e-9 for key in label_b)

    def scored() -> tuple[int, list[tuple]]:
        result = score(history, detect_history(history))
        return result.found, result.false

    assert scored() == (142, [])
    monkeypatch.setattr(pooled, "_toward_siblings", lambda columns, values, shifts, *rest: shifts)
    assert scored() == (136, [(("A", side, "(all)", iteration, "B", "p95_ms"), 24)
                              for side, iteration in (("server", 1), ("client", 1), ("client", 2), ("client", 3))])
    monkeypatch.setattr(pooled, "TOGETHER_P", 2.0)
    assert scored() == (134, [(("A", "server", "(all)", 2, "B", "p95_ms"), 24),
                              (("A", "client", "(all)", 3, "B", "p95_ms"), 24)])


def test_a_residuals_shift_needs_the_values_before_the_shared_noise_is_divided_out():
    """Seed 1234, plan B: label B's residuals of client iteration 1 rise at night 55 once the shared noise is divided
    out (the median of a side that iterations 3 and 4's capacity shift moved); their values do not, and nothing of
    label B's latency moved in plan B: no change of iteration 1's."""
    history = sixty_nights(1234)
    changes = [(s.key["side"], s.key["iteration"], history.nights["B"][c.index]) for s, c, _ in detect_history(history)
               if c.kind == "change" and s.key["plan_id"] == "B" and s.key["label"] == "B" and s.key["metric"] == "p95_ms"
               and s.key["iteration"] == 1]
    assert changes == []


def test_a_level_most_other_series_moved_to_is_not_divided_out_of_a_group():
    """Seed 1215, plan B (8 nights): iterations 3 and 4 lose 15 % of their calls per second at night 55; 2 of their 8
    series found it alone. The median of the other series of the side, which iteration 1's labels are divided by, falls
    at night 55; at `p_value` that step of 3 + 5 nights is noise to divide out, and iteration 1's three labels rose
    by 6-8 % at night 55 (a false change of each). At STEP_P it is a level, and they claim nothing."""
    history = sixty_nights(1215)
    changes = [(s.key["label"], history.nights["B"][c.index]) for s, c, _ in detect_history(history)
               if c.kind == "change" and s.key["plan_id"] == "B" and s.key["metric"] == "calls_per_s"
               and s.key["side"] == "server" and s.key["iteration"] == 1]
    assert changes == []


# --- rates as counts -------------------------------------------------------------------------------------------


def test_one_error_in_191_calls_is_no_outlier_and_three_percent_of_100_calls_is_a_change():
    calls = np.full(40, 191.0)
    rate = np.zeros(40)
    rate[17] = 1 / 191
    assert detect(rate, calls=calls) == []
    assert [c.kind for c in detect(rate)] == ["outlier"]  # a t-test of per-run rates: certain
    rate = np.zeros(40)
    rate[30:] = 0.03
    (change,) = detect(rate, calls=np.full(40, 100.0))
    assert (change.index, change.kind, change.pending) == (30, "change", False)
    assert change.p_value < 1e-10


def test_the_count_test_is_the_binomial_of_the_errors_after_the_split():
    from scipy import stats

    p = count_p(np.zeros(10), np.full(10, 200.0), np.array([1 / 191]), np.array([191.0]))
    assert p == pytest.approx(min(1, 2 * stats.binom.sf(0, 1, 191 / 2191)))
    p = count_p(np.zeros(10), np.full(10, 100.0), np.array([0.03]), np.array([100.0]))
    assert p == pytest.approx(2 * (100 / 1100) ** 3)
    # nights far more different than the binomial says: the test is that much weaker
    wild = np.array([0.0, 0.05, 0.0, 0.04, 0.0, 0.06])
    assert count_p(wild, np.full(6, 1000.0), np.array([0.05]), np.array([1000.0])) > 0.05


def _varying_rates(seed: int, nights: int, calls: float = 2400, rate: float = 0.03, spread: float = 0.2,
                   shift: tuple[int, float] | None = None):
    """Errors counted on `calls` a night whose rate varies `spread` (relative) from night to night; `shift`: from
    that night on, the rate times that factor."""
    rng = np.random.default_rng(seed)
    rates = np.clip(rate * (1 + spread * rng.standard_normal(nights)), 0, 1)
    if shift is not None:
        rates[shift[0]:] = np.clip(rates[shift[0]:] * shift[1], 0, 1)
    counts = np.full(nights, float(calls))
    return rng.binomial(counts.astype(int), rates) / counts, counts


def test_error_rates_whose_nights_vary_more_than_the_binomial_claim_no_change():
    """3 % of errors on 1,800 calls a night, the night's rate 20 % apart: the dispersion is estimated from the
    nights, so the count test is read on Student's t (before: 10 false changes in 200 such histories)."""
    false, found = 0, 0
    for seed in range(100):
        rates, calls = _varying_rates(seed, 40, calls=1800)
        false += sum(c.kind == "change" for c in detect(rates, calls=calls))
        rates, calls = _varying_rates(seed, 40, calls=1800, shift=(25, 1.5))
        found += any(c.kind == "change" and abs(c.index - 25) <= 1 for c in detect(rates, calls=calls))
    assert false <= 1, false
    assert found >= 50, found


def test_successive_nights_give_the_overdispersion_of_the_rates_whatever_a_shift():
    """φ = 1 + spread² x rate x calls for rates that vary `spread` (relative) between nights: 3.88 here, and the
    estimate's mean over 200 series of 50 nights is within 10 % of it; a binomial rate's (φ 1) within 15 % of 1, and
    a +50 % shift at night 25 moves that by under 5 % (its pair of nights is left out; in, it would add about 16 %)."""
    varying, binomial, shifted = [], [], []
    for seed in range(200):
        varying.append(successive_overdispersion(*_varying_rates(seed, 50)))
        binomial.append(successive_overdispersion(*_varying_rates(seed, 50, spread=0.0)))
        shifted.append(successive_overdispersion(*_varying_rates(seed, 50, spread=0.0, shift=(25, 1.5))))
    assert np.mean(varying) == pytest.approx(1 + 0.2**2 * 0.03 * 2400, rel=0.1)
    assert np.mean(binomial) == pytest.approx(1.0, rel=0.15)
    assert np.mean(shifted) == pytest.approx(np.mean(binomial), rel=0.05)
    # a few errors a night are too coarse for it: no estimate
    assert successive_overdispersion(*_varying_rates(0, 50, calls=200, rate=0.002)) is None


def test_a_phi_of_one_that_the_nights_showed_is_an_estimate_read_on_t():
    """Plan B of seed 1390 of the sixty nights: 8 nights of label A's 3 % of errors on 1,800 calls, its rate varying 20 %
    from night to night. Its 7 pairs of nights showed φ under 1 (so 1), and the first night's 27 errors against 56-69
    after were a pending change at p 3e-6 on the normal, under PENDING_P x p_value. φ was estimated from 8 nights: on
    Student's t with 6 degrees of freedom, p 0.003, no change."""
    from scipy import stats

    from tasks.history.changepoints import PENDING_P

    errors, calls = np.array([27, 68, 59, 62, 60, 56, 69, 62.0]), np.full(8, 1800.0)
    rates = errors / calls
    floor = successive_overdispersion(rates, calls)
    assert floor == 1.0
    total, after = errors.sum(), errors[1:].sum()
    normal = 2 * min(stats.binom.sf(after - 1, total, 7 / 8), stats.binom.cdf(after, total, 7 / 8))
    assert normal < ChangeSettings().p_value * PENDING_P, normal
    assert count_p(rates[:1], calls[:1], rates[1:], calls[1:]) == pytest.approx(normal)  # no φ estimated: binomial
    on_t = 2 * stats.t.cdf(stats.norm.ppf(normal / 2), 6)
    assert count_p(rates[:1], calls[:1], rates[1:], calls[1:], floor) == pytest.approx(on_t)
    assert detect(rates, calls=calls) == []


def test_a_rate_its_few_calls_placed_late_moves_to_the_run_of_its_iterations_summed_errors(monkeypatch):
    """Seed 1214 of the sixty nights: label A's errors rise from 0.2 % to 3 % at night 25 in every iteration. Iteration
    1's server error rate (all labels, 450 calls a night) had few errors on the nights after: the binomial likelihood
    of its errors is highest with the rise at night 27. The errors of the four iterations summed put it at 25 (both
    computed here with scipy), and the series' change moves there, found by its group; with the group's MOVE_RUNS at 0
    it stays at 27."""
    from scipy import stats

    from tasks.history import rate_groups

    history = sixty_nights(1214)
    nights = np.array(history.nights["A"])
    plan = [s for s in history.series if s.key["plan_id"] == "A"]
    rates = [s for s in plan if (s.key["side"], s.key["label"], s.key["metric"]) == ("server", "(all)", "error_rate")]
    first = next(s for s in rates if s.key["iteration"] == 1)

    def likeliest_rise(series: list[Series]) -> int:
        errors = np.round(sum(s.values * s.calls for s in series))
        calls = sum(s.calls for s in series)
        fit = [sum(stats.binom.logpmf(errors[side], calls[side], errors[side].sum() / calls[side].sum()).sum()
                   for side in (slice(None, k), slice(k, None))) for k in range(1, errors.size)]
        return int(nights[1 + int(np.argmax(fit))])

    def changes() -> list[tuple[int, str]]:
        return [(int(nights[c.index]), by) for s, c, by in find_changes(plan, ChangeSettings())
                if s is first and c.kind == "change"]

    assert (likeliest_rise([first]), likeliest_rise(rates)) == (27, 25)
    assert changes() == [(25, "(all) server error_rate: 4 iterations")]
    monkeypatch.setattr(rate_groups, "MOVE_RUNS", 0)
    assert changes() == [(27, "series")]


def test_a_short_history_of_varying_rates_claims_no_change_its_split_invented():
    """8 nights (a load plan's) at 3 % of 2,400 calls, the night's rate 20 % apart: with φ from the split's own
    segments, 6 false changes in 200; with φ at least the successive nights' one."""
    false = 0
    for seed in range(200):
        rates, calls = _varying_rates(seed, 8)
        false += sum(c.kind == "change" for c in detect(rates, calls=calls))
    assert false <= 1, false


# --- pending changes -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("after", "pending"), [(1, True), (2, True), (3, False), (8, False)])
def test_a_change_is_pending_until_it_has_settle_runs_on_each_side(after, pending):
    values = 100 * (1 + 0.01 * np.random.default_rng(after).standard_normal(30 + after))
    values[30:] *= 1.3
    (change,) = [c for c in detect(values) if c.kind == "change"]
    assert (change.index, change.pending) == (30, pending)
    assert detect(values, ChangeSettings(settle_runs=1))[0].pending is False


def test_a_pending_change_needs_a_p_value_pending_p_times_smaller():
    """Two last nights 7 % up in 2 % noise: Student's p of 30 nights against 2 lies between p_value x PENDING_P and
    p_value, and no change is claimed (before: a pending one); 10 % up, p under it, a pending change."""
    from scipy import stats

    from tasks.history.changepoints import PENDING_P

    settings = ChangeSettings()
    base = 100 * (1 + 0.02 * np.random.default_rng(0).standard_normal(32))
    for factor, claimed in ((1.07, False), (1.10, True)):
        values = base.copy()
        values[30:] *= factor
        p = stats.ttest_ind(values[:30], values[30:]).pvalue
        assert bool(p <= settings.p_value * PENDING_P) is claimed and p <= settings.p_value, p
        changes = [(c.index, c.pending) for c in detect(values) if c.kind == "change"]
        assert changes == ([(30, True)] if claimed else []), (factor, p)


def test_a_series_some_group_pools_claims_a_change_alone_at_alone_p_a_series_no_group_pools_at_p_value():
    """+5 % at night 20 of 40 in 3 % noise: Student's p of the two halves lies between ALONE_P x p_value and p_value.
    Alone in its plan, the series claims it. Beside a second label of its iteration (a group of two, which finds
    nothing: the shift is 2.5 % of their pooled level), it does not."""
    from scipy import stats

    from tasks.history.pooled import ALONE_P

    settings = ChangeSettings()
    values = 100 * (1 + 0.03 * np.random.default_rng(22).standard_normal(40))
    values[20:] *= 1.05
    p = stats.ttest_ind(values[:20], values[20:]).pvalue
    assert settings.p_value * ALONE_P < p <= settings.p_value, p
    flat = 100 * (1 + 0.03 * np.random.default_rng(23).standard_normal(40))
    alone = [(c.index, by) for _, c, by in find_changes([nightly(values)], settings) if c.kind == "change"]
    assert alone == [(20, "series")]
    pooled = [(s.key["label"], c.index, by) for s, c, by in
              find_changes([nightly(values), nightly(flat, "C")], settings) if c.kind == "change"]
    assert pooled == [], pooled


def test_a_change_a_pooled_series_finds_alone_needs_alone_p():
    """Seed 1217 of the sixty nights: client iteration 1's label B p95 splits at night 47, where nothing moved, at p
    7.4e-5 (under p_value); its groups find nothing there, and at ALONE_P x p_value it claims nothing."""
    history = sixty_nights(1217)
    key = ("A", "client", "(all)", 1, "B", "p95_ms")
    (series,) = [s for s in history.series if series_id(s.key) == key]
    nights = history.nights["A"]
    alone = [nights[c.index] for c in detect(series.values) if c.kind == "change"]
    assert 47 in alone and not [n for n in history.moves[key] if abs(n - 47) <= 3], (alone, history.moves[key])
    found = [nights[c.index] for s, c, _ in detect_history(history) if c.kind == "change" and s is series]
    assert not [n for n in found if abs(n - 47) <= 1], found


def test_a_pooled_series_shorter_than_alone_runs_keeps_its_change_at_p_value():
    """+15 % after 6 of 10 nights in 3 % noise: Student's p lies between ALONE_P x p_value and p_value. Beside a second
    label of its iteration, a series of 10 runs (fewer than ALONE_RUNS: its search tried few splits) keeps it: eight
    nights of a campaign with a regression on the last four (tests/integration/test_history_flow.py)."""
    from scipy import stats

    from tasks.history.pooled import ALONE_P, ALONE_RUNS

    settings = ChangeSettings()
    values = 100 * (1 + 0.03 * np.random.default_rng(5).standard_normal(10))
    values[6:] *= 1.15
    p = stats.ttest_ind(values[:6], values[6:]).pvalue
    assert settings.p_value * ALONE_P < p <= settings.p_value and values.size < ALONE_RUNS, p
    flat = 100 * (1 + 0.03 * np.random.default_rng(6).standard_normal(10))
    pooled = [(s.key["label"], c.index, by) for s, c, by in
              find_changes([nightly(values), nightly(flat, "C")], settings) if c.kind == "change"]
    assert pooled == [("B", 6, "series")], pooled


def test_an_iteration_group_of_a_long_plan_claims_a_shift_at_iteration_p(monkeypatch):
    """Seed 1254 of the sixty nights: label C's +9 % at night 36 (the only move of A or B near it is B's +6 % at 22)
    pulls the pooled p95 of iteration 4's server labels up from night 36. At `ITERATION_P` 0.3 (its value until
    2026-12-06) or at p_value the group claims it and names label B there, where B never moved; in plan A's 50 nights it
    is tested at ITERATION_P x p_value (0.1) and names none. (The rule was read on seed 1247 at 0.3.)"""
    from tasks.history import pooled

    history = sixty_nights(1254)
    nights = history.nights["A"]
    keys = {label: ("A", "server", "(all)", 4, label, "p95_ms") for label in ("B", "C")}
    near = {label: [n for n in history.moves[key] if abs(n - 36) <= 3] for label, key in keys.items()}
    assert near == {"B": [], "C": [36]}, near

    def named_at_36() -> set[str]:
        return {s.key["label"] for s, c, by in detect_history(history) if c.kind == "change"
                and by == "iteration 4 server: 3 labels" and series_id(s.key) in keys.values()
                and nights[c.index] == 36}

    assert named_at_36() == set()
    monkeypatch.setattr(pooled, "ITERATION_P", 0.3)
    assert named_at_36() == {"B"}


def test_an_iteration_group_of_a_short_plan_claims_a_shift_at_p_value(monkeypatch):
    """Seed 2 of the sixty nights, plan B (8 nights): iterations 3-4 lose 15 % of their calls at night 55. Iteration 3's
    client group names its three labels there; tested at ITERATION_P x p_value, as if the plan were long (ALONE_RUNS
    lowered to 5), it names none of them."""
    from tasks.history import pooled

    history = sixty_nights(2)
    nights = history.nights["B"]
    keys = {label: ("B", "client", "(all)", 3, label, "calls_per_s") for label in ("A", "B", "C")}
    assert len(nights) < pooled.ALONE_RUNS
    assert {label: history.moves[key] for label, key in keys.items()} == {
        label: {55: pytest.approx(-0.15)} for label in keys}

    def named_at_55() -> set[str]:
        return {s.key["label"] for s, c, by in detect_history(history) if c.kind == "change"
                and by == "iteration 3 client: 3 labels" and series_id(s.key) in keys.values()
                and nights[c.index] == 55}

    assert named_at_55() == {"A", "B", "C"}
    monkeypatch.setattr(pooled, "ALONE_RUNS", 5)
    assert named_at_55() == set()


def test_an_own_change_far_from_its_groups_shift_the_same_way_is_retested_with_the_shift_as_a_bound(monkeypatch):
    """Seed 1221 at 3-5 % noise: label B's p50 rose 6 % at night 22 (its label's group claims it there) and label
    C's 9 % at 36; nothing else moved either series. Server iteration 2's label B put the rise at 27 alone and client
    iteration 1's label C at 30: 5 and 6 runs from the groups' shifts, more than MOVE_RUNS, so neither was moved, and
    both were false changes. Retested with the groups' runs as bounds (`FAR_RUNS`), neither is a change there. Each is
    named at its label's run, moved as one with the label's other members (`_moved_together`); without that, each
    series misses its shift, a miss and not a false change."""
    from tasks.history import pooled

    history = sixty_nights(1221, (0.03, 0.05))
    keys = {("A", "server", "(all)", 2, "B", "p50_ms"): "B", ("A", "client", "(all)", 1, "C", "p50_ms"): "C"}
    assert {label: sorted(history.moves[key]) for key, label in keys.items()} == {"B": [22], "C": [36]}

    def changes() -> tuple[dict[str, list[int]], int]:
        found = detect_history(history)
        at = {label: sorted(history.nights["A"][c.index] for s, c, _ in found
                            if series_id(s.key) == key and c.kind == "change") for key, label in keys.items()}
        return at, len(score(history, found).false)

    assert changes() == ({"B": [22], "C": [36]}, 0)
    monkeypatch.setattr(pooled, "TOGETHER_P", 2.0)
    assert changes() == ({"B": [], "C": []}, 0)
    monkeypatch.setattr(pooled, "FAR_RUNS", pooled.MOVE_RUNS)
    assert changes() == ({"B": [27], "C": [30]}, 2)


def test_a_sides_latency_percentiles_share_one_noise_estimate_and_other_metrics_keep_their_own():
    """The shared noise of a side is read over its p50 and p95 series together (a slow night slows the typical call and
    the tail alike); extremes and rates are in no side, calls_per_s is a side of its own. The expected sides are
    counted here from the series keys of a sixty-night history's plan A (2 sides x 4 iterations x 4 labels)."""
    from tasks.history import pooled

    plan_a = [s for s in sixty_nights(0).series if s.key["plan_id"] == "A"]
    sides = pooled._sides(plan_a, ChangeSettings())
    sizes = {(side, kind): len(members) for (side, _, kind), members in sides.items()}
    per_metric = {(s.key["side"], s.key["metric"]) for s in plan_a}
    assert {metric for _, metric in per_metric} == {"p50_ms", "p95_ms", "max_ms", "calls_per_s", "error_rate"}
    assert sizes == {(side, kind): count for side in ("server", "client")
                     for kind, count in (("latency", 2 * 4 * 4), ("calls_per_s", 4 * 4))}
    assert all({m.key["metric"] for m in members} == {"p50_ms", "p95_ms"}
               for (_, _, kind), members in sides.items() if kind == "latency")


def test_an_own_change_a_few_runs_from_its_groups_claimed_shift_moves_there_when_its_values_fit_it_as_well(
        monkeypatch):
    """Seed 1251 at 3-5 % noise: label B's p50 rose 6 % at night 22 in all its series; its label's group claimed it
    there. Client iteration 2's series alone put it at night 25 (+8.0 %), where its values fit a step about as well as
    at 22. Moved to its group's run, the history finds 135 of its 152 items with no false change; kept at 25, 134 with
    one."""
    from tasks.history import pooled

    history = sixty_nights(1251, (0.03, 0.05))
    key = ("A", "client", "(all)", 2, "B", "p50_ms")
    assert round(history.moves[key][22], 2) == 0.06

    def result() -> tuple[int, int, list[int]]:
        changes = detect_history(history)
        scored = score(history, changes)
        return scored.found, len(scored.false), [history.nights["A"][c.index] for s, c, _ in changes
                                                  if series_id(s.key) == key and c.kind == "change"]

    assert result() == (135, 0, [22])
    monkeypatch.setattr(pooled, "_toward_claims", lambda *args: None)
    assert result() == (134, 1, [25])


def test_a_familys_latency_groups_pooled_place_a_shift_its_metrics_groups_put_two_runs_off(monkeypatch):
    """Seed 1259 at 3-5 % noise: server iteration 1's labels A and B fell 12 % at night 15 in p50 and p95. The
    iteration's p50 group split its values at 13 (A's p50 -9 % there by noise), and its p95 group, whose values split
    at 15, moved to that sibling's run: A and B named at 13 in both metrics, 5 false changes, 137 of 152 found. The
    iteration's p50 and p95 pooled as one group (`_joint_claims`) settle 15; the p50 group's split moves there
    (`_toward_siblings`), A keeps its own changes at 15 and B is named there in both metrics; `(all)`'s p50, at 13 alone,
    moves to 15 where its three twins (its other side and p95s) fell (`_twins_runs`): no false change, 143 found."""
    from tasks.history import pooled

    history = sixty_nights(1259, (0.03, 0.05))
    moved = [("A", "server", "(all)", 1, label, metric) for label in "AB" for metric in ("p50_ms", "p95_ms")]
    assert all(round(history.moves[key][15], 2) == -0.12 for key in moved)
    assert all(15 not in history.moves[("A", "server", "(all)", 1, "C", metric)] for metric in ("p50_ms", "p95_ms"))

    def result() -> tuple[int, list[tuple], list[tuple[str, str, int]]]:
        changes = detect_history(history)
        scored = score(history, changes)
        return scored.found, sorted(scored.false), sorted(
            (s.key["label"], s.key["metric"], history.nights["A"][c.index]) for s, c, _ in changes
            if series_id(s.key) in moved and c.kind == "change" and 11 <= history.nights["A"][c.index] <= 17)

    all_p50 = ("A", "server", "(all)", 1, "(all)", "p50_ms")
    named = [(label, metric) for label in "AB" for metric in ("p50_ms", "p95_ms")]
    assert result() == (143, [], [(label, metric, 15) for label, metric in named])
    # each change at 15 is a fall between medians of the series' own values (numpy, the outlier night left out): the
    # level before it over the nights since the plan began, the level after it over nights 15 onwards
    nights = np.array(history.nights["A"])
    for s, c, _ in detect_history(history):
        if series_id(s.key) in moved and c.kind == "change" and nights[c.index] == 15:
            values = np.where(nights == OUTLIER, np.nan, s.values)
            after = {round(float(np.nanmedian(values[c.index:end])), 9) for end in range(c.index + 2, values.size + 1)}
            assert c.before_value == pytest.approx(float(np.nanmedian(values[:c.index])), rel=1e-12)
            assert round(c.after_value, 9) in after and c.after_value < c.before_value
    monkeypatch.setattr(pooled, "_joint_claims", lambda named_groups, sides, settings: {})
    assert result() == (138, sorted((key, 13) for key in moved), [(label, metric, 13) for label, metric in named])
    monkeypatch.setattr(pooled, "_twins", lambda series: {})
    assert result() == (137, sorted([(all_p50, 13)] + [(key, 13) for key in moved]),
                        [(label, metric, 13) for label, metric in named])


def test_an_own_change_its_twins_placed_two_runs_away_moves_there_when_all_of_them_fit_it_better(monkeypatch):
    """Seed 1318 at 3-5 % noise: iteration 1's label A fell 12 % at night 15. Client A's p50 alone put it at 13 (its
    nights 13 and 14 low by noise): its own values fit a step at 13 significantly better than at 15, so the move to the
    claim of its iteration's group at 15 was refused. Its three twins (the server's p50, both sides' p95) fell at 15;
    the four series' fits summed prefer 15 (`_twins_preference`), and the change moves there: 137 items found, 1 false
    change; without the twins 136 and 2, client A's p50 at 13."""
    from tasks.history import pooled
    from tasks.history.changepoints import PLACE_CHI2, step_preference

    history = sixty_nights(1318, (0.03, 0.05))
    family = [("A", side, "(all)", 1, "A", metric) for side in ("client", "server") for metric in ("p50_ms", "p95_ms")]
    assert all(round(history.moves[key][15], 2) == -0.12 for key in family)
    assert all(set(history.moves[key]) == ({15, 29} if key[5] == "p95_ms" else {15}) for key in family)
    nights = np.array(history.nights["A"])

    def preference(key: tuple, own: int, split: int) -> float:
        """What a step at night `own` gains over one at `split` in chi-square, from numpy: the squares each takes off,
        over the noise left after the one at `own`; the outlier night left out, up to the series' next true move."""
        values = next(s.values for s in history.series if series_id(s.key) == key)
        kept = (nights != OUTLIER) & (nights < (29 if key[5] == "p95_ms" else 60))
        x, at = values[kept], nights[kept]

        def taken_off(night: int) -> float:
            k, n = int((at < night).sum()), x.size
            return k * (n - k) / n * (x[:k].mean() - x[k:].mean()) ** 2
        noise = (((x - x.mean()) ** 2).sum() - taken_off(own)) / (x.size - 2)
        return (taken_off(own) - taken_off(split)) / noise

    client_p50 = family[0]
    alone = preference(client_p50, 13, 15)
    assert alone >= PLACE_CHI2  # alone, a step at 13 fits significantly better
    assert alone + sum(preference(key, 13, 15) for key in family[1:]) < PLACE_CHI2  # all four: 15 as well or better
    values = next(s.values for s in history.series if series_id(s.key) == client_p50)
    index = {night: i for i, night in enumerate(nights)}
    assert step_preference(values, None, 0, index[15], index[13], values.size - 1, ChangeSettings()) == pytest.approx(
        alone, rel=1e-9)

    def result() -> tuple[int, int, list[tuple[str, str, int]]]:
        changes = detect_history(history)
        scored = score(history, changes)
        return scored.found, len(scored.false), sorted((s.key["side"], s.key["metric"], int(nights[c.index]))
                                                       for s, c, _ in changes if series_id(s.key) in family
                                                       and c.kind == "change" and 11 <= nights[c.index] <= 17)

    sides = [(side, metric) for side in ("client", "server") for metric in ("p50_ms", "p95_ms")]
    assert result() == (137, 1, [(side, metric, 15) for side, metric in sides])
    twins = [s for s in history.series if series_id(s.key) in family[1:]]  # with the changes the detection left
    assert pooled._twins_preference(twins, index[13], index[15], -1.0, ChangeSettings()) == pytest.approx(
        sum(preference(key, 13, 15) for key in family[1:]), rel=1e-9)
    monkeypatch.setattr(pooled, "_twins", lambda series: {})
    assert result() == (136, 2, sorted([("client", "p50_ms", 13)] + [(side, metric, 15) for side, metric in sides[1:]]))
