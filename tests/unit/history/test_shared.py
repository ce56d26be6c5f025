"""The noise the series of a side share on a night (tasks/history/shared.py), and where a member of a group
splits best (pooled._best_split), against numpy and scipy computed here."""

from __future__ import annotations

import numpy as np
from scipy import stats

from tasks.history.changepoints import ChangeSettings
from tasks.history.pooled import _best_split
from tasks.history.shared import shared_noise

NIGHTS = 40


def _side(rng: np.random.Generator, common: np.ndarray, count: int = 6) -> list[np.ndarray]:
    return [100 * (1 + 0.2 * i) * (1 + common) * (1 + 0.002 * rng.standard_normal(NIGHTS)) for i in range(count)]


def test_the_shared_noise_is_the_median_of_the_series_relative_to_their_level():
    rng = np.random.default_rng(1)
    values = _side(rng, 0.01 * rng.standard_normal(NIGHTS))
    noise = shared_noise([np.arange(NIGHTS)] * len(values), values, [[]] * len(values), ChangeSettings(), 2.5, NIGHTS)
    common = np.median([v / np.median(v) - 1 for v in values], axis=0)
    np.testing.assert_allclose(noise, common - np.median(common), atol=1e-12)


def test_a_lasting_step_of_every_series_stays_in_the_values():
    """A +4 % of the whole side that no series found alone is a level of the shared series, not noise."""
    rng = np.random.default_rng(2)
    common = 0.005 * rng.standard_normal(NIGHTS)
    common[20:] += 0.04
    values = _side(rng, common)
    noise = shared_noise([np.arange(NIGHTS)] * len(values), values, [[]] * len(values), ChangeSettings(), 2.5, NIGHTS)
    assert abs(np.median(noise[20:]) - np.median(noise[:20])) < 0.005
    corrected = [v / (1 + noise) for v in values]
    assert all(np.median(v[20:]) / np.median(v[:20]) > 1.03 for v in corrected)


def test_too_few_series_share_nothing():
    rng = np.random.default_rng(3)
    values = _side(rng, 0.01 * rng.standard_normal(NIGHTS), count=2)
    noise = shared_noise([np.arange(NIGHTS)] * 2, values, [[]] * 2, ChangeSettings(), 2.5, NIGHTS)
    assert not noise.any()


def test_a_member_splits_best_where_its_t_statistic_is_largest():
    rng = np.random.default_rng(4)
    values = 100 * (1 + 0.03 * rng.standard_normal(30))
    values[17:] *= 1.08
    positions = np.arange(100, 130)
    expected = max(range(2, 30), key=lambda k: stats.ttest_ind(values[k:], values[:k]).statistic)
    assert _best_split(positions, values, 100, 129, 8.0) == 100 + expected
    downward = max(range(2, 30), key=lambda k: -stats.ttest_ind(values[k:], values[:k]).statistic)
    assert _best_split(positions, values, 100, 129, -8.0) == 100 + downward
