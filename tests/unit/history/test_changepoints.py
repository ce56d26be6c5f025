"""Change points of nightly series: the E-divisive statistic against the paper's formula, and `detect` on
seeded synthetic series with known shifts, outliers, gaps, and the degenerate cases (short, constant, 0)."""

from __future__ import annotations

import itertools
import warnings
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from tasks.history.changepoints import EPISODE_RUNS, PLACE_RUNS, Change, ChangeSettings, _median, detect, placed
from tasks.history.edivisive import best_split, bisect, pair_sums, qhat


def paper_qhat(x: np.ndarray, y: np.ndarray) -> float:
    """Matteson & James (2014), eq. (4)-(5) with alpha = 1, summed term by term."""
    n, m = len(x), len(y)
    between = sum(abs(a - b) for a in x for b in y)
    within_x = sum(abs(a - b) for a, b in itertools.combinations(x, 2))
    within_y = sum(abs(a - b) for a, b in itertools.combinations(y, 2))
    energy = 2 / (m * n) * between
    energy -= within_x / (n * (n - 1) / 2) if n > 1 else 0.0
    energy -= within_y / (m * (m - 1) / 2) if m > 1 else 0.0
    return m * n / (m + n) * energy


def nightly(seed: int, runs: int = 40, noise: float = 0.02, level: float = 100.0) -> np.ndarray:
    """A series with gaussian multiplicative run-to-run noise."""
    rng = np.random.default_rng(seed)
    return level * (1 + noise * rng.standard_normal(runs))


def changes_of(values) -> list[tuple[int, str]]:
    return [(c.index, c.kind) for c in detect(values)]


# --- the statistic -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_qhat_equals_the_papers_formula_for_every_split_of_every_interval(seed):
    z = np.random.default_rng(seed).normal(size=11) + np.repeat([0.0, 3.0], [6, 5])  # ties-free, two levels
    w = pair_sums(z)
    for start, stop in [(0, 11), (2, 9), (4, 6), (7, 11)]:
        q = qhat(w, start, stop)
        for tau in range(start + 1, stop):
            for kappa in range(start + 2, stop + 1):
                got = q[tau - start - 1, kappa - start - 2]
                if kappa <= tau:
                    assert got == -np.inf
                else:
                    assert got == pytest.approx(paper_qhat(z[start:tau], z[tau:kappa]), abs=1e-9)


def test_best_split_is_the_argmax_of_the_papers_qhat():
    z = np.array([5.0, 5.2, 4.9, 5.1, 7.0, 7.3, 6.8, 7.1, 7.2])
    expected = max(
        ((tau, paper_qhat(z[:tau], z[tau:kappa])) for tau in range(1, 9) for kappa in range(tau + 1, 10)),
        key=lambda pair: pair[1],
    )
    tau, q = best_split(pair_sums(z), 0, len(z))
    assert (tau, q) == (expected[0], pytest.approx(expected[1]))


def permutation_test(rng: np.random.Generator, draws: int = 199, alpha: float = 0.01):
    """The paper's significance test: how often a shuffled interval has a best q̂ as large."""

    def significant(z: np.ndarray, start: int, tau: int, kappa: int) -> bool:
        interval = z[start:kappa]
        observed = best_split(pair_sums(interval), 0, interval.size)[1]
        larger = sum(
            best_split(pair_sums(shuffled), 0, interval.size)[1] >= observed
            for shuffled in (rng.permutation(interval) for _ in range(draws))
        )
        return (larger + 1) / (draws + 1) <= alpha

    return significant


def test_bisection_with_the_papers_permutation_test_finds_both_shifts():
    z = np.concatenate([nightly(1, 20), nightly(2, 15, level=120.0), nightly(3, 20, level=95.0)])
    test = permutation_test(np.random.default_rng(0))
    splits = bisect(z, lambda start, tau, kappa: test(z, start, tau, kappa))
    assert len(splits) == 2
    assert abs(splits[0] - 20) <= 1 and abs(splits[1] - 35) <= 1


def test_bisection_stops_at_the_first_refused_candidate():
    z = np.concatenate([np.zeros(10), np.ones(10), np.full(10, 3.0)])
    assert bisect(z, lambda start, tau, kappa: False) == []
    assert bisect(z, lambda start, tau, kappa: True) == list(range(1, 30))


# --- detect --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("shift", [0.10, 0.15, 0.25, -0.10, -0.15, -0.25])
def test_a_step_shift_is_found_at_its_run(seed, shift):
    values = nightly(seed, noise=0.02 + 0.01 * (seed % 2))
    values[17:] *= 1 + shift
    (change,) = detect(values)
    assert change.kind == "change"
    assert abs(change.index - 17) <= 1
    assert np.sign(change.change_pct) == np.sign(shift)
    assert change.change_pct == pytest.approx(shift * 100, abs=3)
    assert change.p_value <= ChangeSettings().p_value


@pytest.mark.parametrize("seed", range(5))
def test_two_shifts_are_two_changes(seed):
    values = nightly(seed, runs=60)
    values[20:] *= 1.15
    values[42:] *= 0.85
    found = detect(values)
    assert [c.kind for c in found] == ["change", "change"]
    assert abs(found[0].index - 20) <= 1 and abs(found[1].index - 42) <= 1
    assert found[0].change_pct > 0 > found[1].change_pct


def test_shifts_in_a_long_history_are_found_in_their_windows():
    values = nightly(7, runs=1000, noise=0.03)
    for run, factor in [(130, 1.2), (455, 0.85), (800, 1.1)]:
        values[run:] *= factor
    found = detect(values)
    assert [c.kind for c in found] == ["change"] * 3
    assert all(abs(c.index - run) <= 1 for c, run in zip(found, [130, 455, 800]))


@pytest.mark.parametrize("seed", range(50))
def test_noise_without_a_change_gives_nothing(seed):
    rng = np.random.default_rng(1000 + seed)
    values = nightly(seed, runs=int(rng.integers(20, 300)), noise=rng.uniform(0.01, 0.03))
    assert detect(values) == []


def test_the_segments_are_described_by_their_medians_and_their_t_test():
    values = nightly(3, runs=30)
    values[12:] *= 1.2
    (change,) = detect(values)
    assert change.index == 12
    before, after = values[:12], values[12:]
    assert change.before_value == pytest.approx(np.median(before))
    assert change.after_value == pytest.approx(np.median(after))
    assert change.change_pct == pytest.approx((np.median(after) / np.median(before) - 1) * 100)
    assert change.p_value == pytest.approx(stats.ttest_ind(before, after).pvalue)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("factor", [1.5, 2.0, 0.6])
def test_a_one_night_outlier_is_one_outlier(seed, factor):
    values = nightly(seed, noise=0.03)
    values[23] *= factor
    (outlier,) = detect(values)
    assert (outlier.index, outlier.kind) == (23, "outlier")
    assert outlier.after_value == values[23]
    assert outlier.before_value == pytest.approx(np.median(np.delete(values, 23)))
    assert outlier.change_pct == pytest.approx((values[23] / outlier.before_value - 1) * 100)
    assert outlier.p_value < 1e-6


@pytest.mark.parametrize("seed", [1362, *range(30)])
def test_a_night_out_of_line_is_never_a_change_and_its_way_back(seed):
    # 4-8 x the noise: too little for the outlier pre-pass, and at times (seed 1362, found by a search)
    # enough for E-divisive to isolate the night between two significant splits.
    values = nightly(seed)
    values[20] = 100 * (1 + 0.02 * (4 + seed % 5))
    assert [c for c in detect(values) if c.kind == "change"] == []


def test_an_outlier_beside_a_shift_keeps_the_shift():
    values = nightly(4)
    values[25:] *= 0.8
    values[12] *= 1.8
    assert changes_of(values) == [(12, "outlier"), (25, "change")]


def test_nan_runs_are_skipped_and_indices_stay_those_of_the_input():
    values = nightly(5)
    values[20:] *= 1.2
    values[[3, 11, 19, 20, 33]] = np.nan
    assert changes_of(values) == [(21, "change")]
    assert changes_of(list(values)) == [(21, "change")]


def test_a_series_shorter_than_min_runs_claims_nothing():
    assert detect([100.0, 100.0, 150.0, 150.0]) == []
    assert detect([100.0, np.nan, 100.0, 150.0, np.nan, 150.0]) == []
    assert detect([]) == []
    step = [100.0] * 4 + [150.0] * 4
    assert detect(step, ChangeSettings(min_runs=10)) == []
    assert changes_of(step) == [(4, "change")]


@pytest.mark.parametrize("level", [0.0, 0.1, 1 / 3, 5.0, 1e6])
def test_a_constant_series_has_no_change_and_no_warning(level):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 / 0 in the t-test of two constant segments
        assert detect([level] * 40) == []


def test_errors_appearing_from_zero_are_a_change_without_a_percentage():
    rng = np.random.default_rng(9)
    error_rate = np.zeros(40)
    error_rate[28:] = 0.01 * (1 + 0.2 * rng.standard_normal(12))
    (change,) = detect(error_rate)
    assert (change.index, change.kind, change.before_value, change.change_pct) == (28, "change", 0.0, None)
    assert change.after_value == pytest.approx(0.01, rel=0.2)
    assert change.p_value < 1e-6


def test_a_first_night_off_the_new_level_is_the_change_not_an_outlier():
    error_rate = np.r_[np.zeros(20), 0.03, np.full(19, 0.01)]
    assert changes_of(error_rate) == [(20, "change")]
    overshoot = nightly(8)
    overshoot[20] *= 1.4
    overshoot[21:] *= 1.2
    assert changes_of(overshoot) == [(20, "change")]


def test_errors_on_one_night_only_are_an_outlier():
    error_rate = np.zeros(40)
    error_rate[15] = 0.02
    (outlier,) = detect(error_rate)
    assert (outlier.index, outlier.kind, outlier.before_value, outlier.after_value) == (15, "outlier", 0, 0.02)
    assert outlier.change_pct is None and outlier.p_value == 0.0  # against nights that are all 0


def test_a_change_below_min_change_pct_is_dropped():
    values = nightly(6, noise=0.003)
    values[20:] *= 1.03  # ten times the noise: significant, but smaller than the 5 % default
    assert detect(values) == []
    assert [(c.index, c.kind) for c in detect(values, ChangeSettings(min_change_pct=2.0))] == [(20, "change")]


def test_a_window_too_small_for_a_split_is_refused():
    with pytest.raises(ValueError):
        ChangeSettings(window=2)


def test_a_change_is_placed_where_its_two_segments_have_the_least_squares():
    """`_placed` against the within-segment sums of squares computed here for every split up to PLACE_RUNS runs
    away."""
    from tasks.history.changepoints import PLACE_RUNS, _placed, _Points

    values = nightly(7, runs=30)
    values[14:] *= 1.08
    values[24:] *= 0.9
    for guess in (11, 13, 17):
        def squares(k, guess=guess):
            left, right = values[:k], values[k:24]
            return ((left - left.mean()) ** 2).sum() + ((right - right.mean()) ** 2).sum()
        expected = min(range(guess - PLACE_RUNS, guess + PLACE_RUNS + 1), key=squares)
        assert _placed(_Points(values, None), [guess, 24], fixed={24}) == [expected, 24]


def test_a_change_between_two_shifts_is_retested_against_the_one_a_group_found():
    """A series' own change at 22, with a group's change at 29 (the true shift) as a new bound: [0, 22) against
    [22, 29) is noise (p above p_value), so it goes; a change 3 runs off a true shift is placed back at it."""
    from tasks.history.changepoints import retest

    values = nightly(8, runs=40, noise=0.01)
    values[29:] *= 1.12
    p = stats.ttest_ind(values[:22], values[22:29]).pvalue
    assert p > ChangeSettings().p_value
    assert retest(values, [22], [29], ChangeSettings()) == []
    values[12:] *= 1.1
    (change,) = retest(values, [15], [29], ChangeSettings())
    assert change.index == 12
    assert change.p_value == pytest.approx(stats.ttest_ind(values[:12], values[12:29]).pvalue)


def test_a_change_whose_neighbour_the_retest_drops_stays_where_it_was_placed():
    """Two shifts a week apart (+12 % at 20 and at 27) and a group's change at 33 that shortens the second one's
    segment: [20, 27) against [27, 33) is not significant at p_value, so that change goes. The first stays at 20,
    where it was placed; placed again over [0, 33), which holds both shifts, least squares would put it at 22."""
    from tasks.history.changepoints import PLACE_RUNS, retest

    values = nightly(15, runs=40, noise=0.03)
    values[20:] *= 1.12
    values[27:] *= 1.12
    values[33:] *= 1.1
    assert stats.ttest_ind(values[20:27], values[27:33]).pvalue > ChangeSettings().p_value
    squares = lambda k: ((values[:k] - values[:k].mean()) ** 2).sum() + ((values[k:33] - values[k:33].mean()) ** 2).sum()
    assert min(range(20 - PLACE_RUNS, 20 + PLACE_RUNS + 1), key=squares) == 22
    (change,) = retest(values, [20, 27], [33], ChangeSettings())
    assert change.index == 20


def test_a_shift_the_split_step_misses_in_a_mixed_segment_is_found_between_fixed_bounds():
    """+8 % at 8, -3 % at 15 (under what a change must move here), +5 % at 22, +12 % at 29 in a low-noise series:
    the split step over [8, 29), which holds three levels, does not come to 22. Between the bounds 15 and 29,
    `split_between` finds it at its run, with the t-test of those two segments."""
    from tasks.history.changepoints import split_between

    values = nightly(0, runs=40, noise=0.01)
    values[8:] *= 1.08
    values[15:] *= 0.97
    values[22:] *= 1.05
    values[29:] *= 1.12
    settings = ChangeSettings(min_change_pct=3.5)
    assert [c.index for c in detect(values, settings, place=False)] == [8, 29]
    (change,) = split_between(values, [8, 15, 29], settings)
    assert change.index == 22
    assert change.p_value == pytest.approx(stats.ttest_ind(values[15:22], values[22:29]).pvalue)


def test_a_rate_change_is_placed_where_the_errors_of_its_two_segments_are_likeliest():
    """`_placed` for a rate against the binomial log-likelihood (scipy's pmf, night by night, each segment at its own
    rate) of every split up to 3 runs away; least squares of the rates would follow the noisiest nights instead."""
    from tasks.history.changepoints import _placed, _Points

    rng = np.random.default_rng(35)
    calls = rng.integers(20, 2000, 30).astype(float)  # nights of 20 calls are the noisiest rates
    errors = rng.binomial(calls.astype(int), np.where(np.arange(30) < 14, 0.01, 0.03)).astype(float)
    rates = errors / calls

    def likelihood(k):
        return sum(stats.binom.logpmf(errors[part], calls[part], errors[part].sum() / calls[part].sum()).sum()
                   for part in (slice(0, k), slice(k, 30)))

    def squares(k):
        return sum(((rates[part] - rates[part].mean()) ** 2).sum() for part in (slice(0, k), slice(k, 30)))

    placed = set()
    for guess in (11, 13, 16):
        expected = max(range(guess - 3, guess + 4), key=likelihood)
        assert _placed(_Points(rates, calls), [guess]) == [expected]
        placed.add(expected)
    assert placed == {14}  # the true run, from each guess
    assert min(range(8, 15), key=squares) == 11  # least squares, from 11: 3 runs early


def test_one_error_among_nights_at_zero_is_no_outlier_of_a_rate():
    """A night whose errors the count test does not set apart from its 3 neighbours on each side stays in (Fisher's
    exact test here: 1 error in 200 calls against 0 in 1,200 is p 0.14); one that it does is an outlier."""
    calls = np.full(40, 200.0)
    rates = np.zeros(40)
    rates[10] = 1 / 200
    assert stats.fisher_exact([[1, 199], [0, 1200]]).pvalue > ChangeSettings().p_value
    assert [c.kind for c in detect(rates)] == ["outlier"]  # as values, the night is out of line
    assert detect(rates, calls=calls) == []  # as counts, it is a low rate's noise
    rates[25] = 30 / 200
    assert stats.fisher_exact([[30, 170], [0, 1200]]).pvalue <= ChangeSettings().p_value
    assert [(c.index, c.kind) for c in detect(rates, calls=calls)] == [(25, "outlier")]


@pytest.mark.parametrize("length", [2, 3])
@pytest.mark.parametrize("seed", range(10))
def test_a_short_episode_that_ends_where_it_began_is_outliers_not_two_changes(seed, length):
    """Two or three nights at +25 % between two stretches at one level are outliers, each one reported that the
    outlier rule's own test finds (25 % is 12 times the noise: all of them). Two nights the outlier pre-pass takes
    out (the medians of three neighbours); three it did not, and the change up and the change back were claimed."""
    values = nightly(seed)
    values[20:20 + length] *= 1.25
    level = np.median(np.delete(values, range(20, 20 + length)))  # no change: one segment, the episode left out
    found = detect(values)
    assert [(c.index, c.kind) for c in found] == [(i, "outlier") for i in range(20, 20 + length)]
    assert [c.change_pct for c in found] == pytest.approx([(values[i] / level - 1) * 100 for i in range(20, 20 + length)])


@pytest.mark.parametrize("seed", range(10))
def test_a_level_longer_than_an_episode_or_one_that_does_not_come_back_is_two_changes(seed):
    values = nightly(seed)
    values[20:20 + EPISODE_RUNS + 1] *= 1.25  # one night more than an episode
    assert changes_of(values) == [(20, "change"), (20 + EPISODE_RUNS + 1, "change")]
    stairs = nightly(seed)
    stairs[20:] *= 1.25
    stairs[23:] *= 1.25  # up, then up again: no way back
    assert changes_of(stairs) == [(20, "change"), (23, "change")]
    back_elsewhere = nightly(seed)
    back_elsewhere[20:23] *= 1.25
    back_elsewhere[23:] *= 0.85  # down past where it began: a level of its own
    assert changes_of(back_elsewhere) == [(20, "change"), (23, "change")]


def test_a_burst_of_errors_on_three_nights_is_no_change_of_the_rate():
    """Seed 396 of bench/history_sixty.py (client, iteration 1, label B): 4, 3 and 3 errors in 200 calls on three
    nights among nights of 0-2, all at 0.2 %. The count test found a change up and one back (p 9e-5 and 2e-5); each
    night alone is not out of line with the level around it at p_value, so nothing is claimed."""
    errors = np.array([0, 0, 0, 0, 1, 0, 0, 4, 3, 3, 0, 0, 0, 2, 0, 1, 1, 0, 1, 1, 0, 2, 2, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0,
                       0, 1, 1, *[0] * 14])
    calls = np.full(errors.size, 200.0)
    assert detect(errors / calls, calls=calls) == []


def _best_fit(values: np.ndarray, start: int, stop: int, candidates: range) -> int:
    """The split of values[start:stop] among `candidates` with the least squares about the two sides' means."""
    squares = lambda x: float(((x - x.mean()) ** 2).sum())
    return min(candidates, key=lambda k: squares(values[start:k]) + squares(values[k:stop]))


def test_placed_moves_an_unplaced_change_to_where_its_segments_fit_best_and_tests_it_there():
    """A step at 15 given at 18 (as E-divisive may split a group's series) moves to the least-squares split within
    PLACE_RUNS; with a bound fixed at 17 it may not pass it; given at the bound, or turned the other way, it stays."""
    rng = np.random.default_rng(3)
    values = 100 + 0.5 * rng.standard_normal(30)
    values[15:] += 5
    given = Change(18, "change", 100.0, 105.0, 5.0, 1e-3)

    (change,) = placed(values, [given], [], ChangeSettings())
    assert change.index == _best_fit(values, 0, 30, range(18 - PLACE_RUNS, 18 + PLACE_RUNS + 1)) == 15
    assert change.before_value == pytest.approx(np.median(values[:15]))
    assert change.after_value == pytest.approx(np.median(values[15:]))
    assert change.p_value == pytest.approx(stats.ttest_ind(values[:15], values[15:]).pvalue, rel=1e-6)

    (bounded,) = placed(values, [given], [17], ChangeSettings())
    assert bounded.index == _best_fit(values, 17, 30, range(18, 18 + PLACE_RUNS + 1))
    assert bounded.index > 17
    assert placed(values, [replace(given, index=17)], [17], ChangeSettings()) == [replace(given, index=17)]
    turned = replace(given, change_pct=-5.0)
    assert placed(values, [turned], [], ChangeSettings()) == [turned]


def test_a_steps_preference_is_the_chi_square_of_the_squares_one_split_takes_off_beyond_the_other():
    """A step of 6 over noise 5 at index 10 of 30 points: what a step at 10 gains over one at 13 is under chi-square's 5 %
    point (3.84, of the gain over the noise left), over one at 4 it is not; the statistic computed here with numpy from
    the sums of squares of the two splits. Negative the other way round; infinite where a side would be empty."""
    from tasks.history.changepoints import PLACE_CHI2, step_preference

    rng = np.random.default_rng(3)
    values = 100 + np.where(np.arange(30) >= 10, 6.0, 0.0) + 5 * rng.standard_normal(30)

    def sse(split: int) -> float:
        return float(((values[:split] - values[:split].mean()) ** 2).sum()
                     + ((values[split:] - values[split:].mean()) ** 2).sum())

    statistic = {split: (sse(split) - sse(10)) / (sse(10) / 28) for split in (4, 13)}
    assert statistic[13] < PLACE_CHI2 < statistic[4]
    settings = ChangeSettings()
    for split in (4, 13):
        assert step_preference(values, None, 0, split, 10, 29, settings) == pytest.approx(statistic[split], rel=1e-9)
    assert step_preference(values, None, 0, 10, 13, 29, settings) == pytest.approx(
        (sse(10) - sse(13)) / (sse(13) / 28), rel=1e-9)
    assert step_preference(values, None, 0, 10, 13, 29, settings) < 0  # a step at 10 fits better than at 13
    assert step_preference(values, None, 0, 0, 10, 29, settings) == float("inf")  # no step at the first point


def test_the_segments_median_is_numpys():
    """`_median` (np.partition, for the search's hot path) gives np.median's number, odd and even sizes, ties too."""
    rng = np.random.default_rng(7)
    for size in [*range(1, 40), 1000, 1001]:
        for scale in (1e-9, 1.0, 1e9):
            values = rng.normal(size=size) * scale
            ties = np.round(values / scale, 1) * scale
            assert _median(values) == float(np.median(values))
            assert _median(ties) == float(np.median(ties))


def test_qhat_of_an_interval_past_the_kept_grids_is_the_papers_too():
    """An interval longer than KEPT_GRID gets grids made for it alone: the same statistic as the kept ones give."""
    from tasks.history.edivisive import KEPT_GRID

    z = np.random.default_rng(5).normal(size=KEPT_GRID + 6)
    w = pair_sums(z)
    q = qhat(w, 2, KEPT_GRID + 6)
    for tau, kappa in [(3, 4), (20, 50), (KEPT_GRID, KEPT_GRID + 6)]:
        assert q[tau - 3, kappa - 4] == pytest.approx(paper_qhat(z[2:tau], z[tau:kappa]), abs=1e-9)
    assert q[10 - 3, 8 - 4] == -np.inf  # kappa <= tau
