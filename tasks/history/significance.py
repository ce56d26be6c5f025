"""The two tests a change point is asked: Student's t-test of two segments of nights, and, for rates (error_rate),
a count test of the errors over the calls of the two segments.

A rate is errors over calls: one error in 191 calls is a rate of 0.5 %, and beside nights at 0 a t-test over
per-night rates calls it certain (two constant sides). A count test asks how likely that many of the
segments' errors fall on the nights after the split when the rate did not change: given K errors in all,
those after it are Binomial(K, π), π the share of the calls after it (the exact conditional test of two
rates). One error in 191 calls beside 2,000 calls without is then p 0.17; 3 errors in 100 calls beside
1,000 without, 1.5e-3 for one night and far less for several. Nights vary more than the binomial says
(a night with a flaky dependency): the counts are divided by the overdispersion φ (Pearson's χ² of the
nights against their segment's rate, over its degrees of freedom, at least 1), the quasi-binomial answer. A φ
estimated from the nights is itself uncertain, as a t-test's variance is: the test's normal deviate is then read
on Student's t with the nights' degrees of freedom (a label at 3 % of errors whose nights vary 20 % gave 10
false changes in 200 histories of 40 nights on the normal, none on t). So is a φ of 1 the nights happened to show:
only a series whose nights have too few errors to estimate any φ (`successive_overdispersion` gives None) is
taken as binomial and read on the normal. Plan B's 8 nights of issue 21's kind of history, rates varying 20 %: 7
pairs of nights showed φ under 1, and one low first night (27 errors, then 56-69 in 1,800 calls) was a change at
p 3e-6 on the normal; on t, 0.003.
φ from the two segments of a split is too small where the split was chosen because the nights differ most there
(E-divisive asks for the best split): a series' φ is at least the one its successive nights show
(`successive_overdispersion`, which a shift or an outlier moves little). 8 nights at 3 % of 2,400 calls whose rate
varies 20 % (φ 3.9): 6 false changes in 200 before, 1 after; a +50 % shift at night 25 of 40 such nights is found
118 times in 200 instead of 141.
"""

from __future__ import annotations

import functools

import numpy as np

TRIM = 0.1  # the share of night pairs left out of `successive_overdispersion`, the most unlike first (2 at least)
PAIR_ERRORS = 10  # the least errors of a pair of nights that `successive_overdispersion` reads (5 a night)
MIN_PAIRS = 6  # fewer such pairs: no estimate (1)


@functools.cache
def _special():
    """scipy.special, imported at the first test: the analysis after an ingest whose campaign has no series of
    `min_runs` runs yet tests nothing, and `perfcampaign ingest` then spends no 0.2 s loading scipy."""
    from scipy import special  # heavy: 0.15-0.25 s

    return special


def student_p(left: np.ndarray, right: np.ndarray) -> float:
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
    return float(2 * _special().stdtr(df, -abs(t)))


def homogeneity_p(q: float, df: int) -> float:
    """p of Cochran's Q (the weighted squared deviations of k estimates from their weighted mean) against
    chi-square with df = k - 1: small when the estimates differ by more than their errors."""
    return float(_special().gammaincc(df / 2, q / 2)) if df > 0 else 1.0


def count_p(rates_left: np.ndarray, calls_left: np.ndarray, rates_right: np.ndarray, calls_right: np.ndarray,
            floor: float | None = None) -> float:
    """Two-sided p-value that the rate (errors / calls) is the same on both sides; see the module docstring.
    floor: the least φ (`successive_overdispersion`'s), None when the nights could not estimate one."""
    errors_left, errors_right = rates_left * calls_left, rates_right * calls_right
    n_left, n_right = calls_left.sum(), calls_right.sum()
    total = errors_left.sum() + errors_right.sum()
    if total <= 0 or n_left <= 0 or n_right <= 0:
        return 1.0
    segments = [(errors_left, calls_left), (errors_right, calls_right)]
    phi = max(1.0 if floor is None else floor, _overdispersion(segments))
    share = n_right / (n_left + n_right)
    k, big_k = errors_right.sum() / phi, total / phi
    # P(X >= k) and P(X <= k) for X ~ Binomial(K, π), through the incomplete beta (k need not be whole)
    special = _special()
    upper = special.betainc(k, big_k - k + 1, share) if k > 0 else 1.0
    lower = special.betainc(big_k - k, k + 1, 1 - share) if k < big_k else 1.0
    p = float(min(1.0, 2 * min(upper, lower)))
    if p >= 1.0 or (phi == 1.0 and floor is None):
        return p  # the binomial, known to hold: too few errors a night to estimate any φ
    # φ is estimated from the nights themselves: as for a t-test, its own uncertainty widens the test (the
    # binomial's normal deviate read on Student's t with the nights' degrees of freedom)
    return float(2 * special.stdtr(errors_left.size + errors_right.size - 2, special.ndtri(p / 2)))


def _overdispersion(segments: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """φ: Pearson's χ² of each night's errors against its segment's pooled rate, over the degrees of freedom."""
    chi2, nights = 0.0, 0
    for errors, calls in segments:
        nights += errors.size
        rate = errors.sum() / calls.sum() if calls.sum() > 0 else 0.0
        if 0 < rate < 1:
            chi2 += float((((errors - calls * rate) ** 2) / (calls * rate * (1 - rate))).sum())
    df = nights - len(segments)
    return max(1.0, chi2 / df) if df > 0 else 1.0


def successive_overdispersion(rates: np.ndarray, calls: np.ndarray) -> float | None:
    """φ from each night against the next: Pearson's χ² of the pair at its pooled rate (χ² with 1 degree of freedom
    when the rate holds), its mean over the pairs, the largest TRIM left out (a shift is one pair, an outlier two),
    scaled by that trimmed mean's value under χ²₁. Only pairs with PAIR_ERRORS errors or more: with a few errors a
    night the counts are too coarse for χ² (a pair of 0 and 1 error is always 1): with fewer than MIN_PAIRS such
    pairs, None (no estimate)."""
    errors = rates * calls
    e1, e2, n1, n2 = errors[:-1], errors[1:], calls[:-1], calls[1:]
    read = (e1 + e2 >= PAIR_ERRORS) & (n1 > 0) & (n2 > 0) & (e1 < n1) & (e2 < n2)
    if read.sum() < MIN_PAIRS:
        return None
    e1, e2, n1, n2 = e1[read], e2[read], n1[read], n2[read]
    p = (e1 + e2) / (n1 + n2)
    z2 = np.sort((e1 / n1 - e2 / n2) ** 2 / (p * (1 - p) * (1 / n1 + 1 / n2)))
    left_out = max(2, round(TRIM * z2.size))
    share = left_out / z2.size
    # E[X | X below its (1 - share) quantile] for X ~ χ²₁ is P(χ²₃ < q) / (1 - share): x·f₁(x) = f₃(x)
    special = _special()
    expected = special.gammainc(1.5, special.gammaincinv(0.5, 1 - share)) / (1 - share)
    return max(1.0, float(z2[:-left_out].mean()) / expected)
