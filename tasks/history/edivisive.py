"""E-divisive means (Matteson & James 2014) on one univariate series, alpha = 1.

The statistic between X = z[s:τ] (n points) and Y = z[τ:κ] (m points) is q̂ = mn/(m+n) · Ê(X, Y), with the
paper's energy distance Ê = 2/(mn) Σ|x−y| − C(n,2)⁻¹ Σ_{i<k}|x_i−x_k| − C(m,2)⁻¹ Σ_{j<k}|y_j−y_k|.
Every sum is one of W(a, b) = Σ |z_i − z_k| over a ≤ i < k < b: the within-sums are W(s, τ) and W(τ, κ), the
between-sum is W(s, κ) − W(s, τ) − W(τ, κ). So one O(n²) table of W gives q̂ for every (τ, κ) of every
interval by indexing, where the direct sums would cost O(n³) per interval.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from itertools import pairwise

import numpy as np


def pair_sums(z: np.ndarray) -> np.ndarray:
    """W[a, b] = Σ |z_i − z_k| over a ≤ i < k < b, for 0 ≤ a, b ≤ len(z) (0 when b ≤ a + 1)."""
    n = len(z)
    upper = np.triu(np.abs(z[:, None] - z[None, :]), k=1)
    prefix = np.zeros((n + 1, n + 1))
    prefix[:n, 1:] = np.cumsum(upper, axis=1)  # row i: Σ over k < b
    return np.cumsum(prefix[::-1], axis=0)[::-1]  # then Σ over rows i ≥ a


def qhat(w: np.ndarray, start: int, stop: int) -> np.ndarray:
    """q̂(z[start:τ], z[τ:κ]) for τ = start+1 … stop−1 (rows) and κ = start+2 … stop (columns).

    `w` is `pair_sums(z)`. Cells with κ ≤ τ (Y empty) are −inf, so they never win an argmax.
    """
    size = stop - start
    taus, kappas, n, m, n_pairs, m_pairs, points, valid = (_kept_grid if size <= KEPT_GRID else _grid)(size)
    taus, kappas = taus + start, kappas + start
    within_x = w[start, taus]
    within_y = w[taus, kappas]
    between = w[start, kappas] - within_x - within_y
    q = 2 * (between - m * within_x / n_pairs - n * within_y / m_pairs) / points
    return np.where(valid, q, -np.inf)


def _grid(size: int) -> tuple[np.ndarray, ...]:
    """`qhat`'s index grids for an interval of `size` points, from its start: τ and κ, the sizes n and m of the two
    sides, their divisors (a one-point side has no pairs: its within-sum is 0, so any finite divisor leaves its term
    at 0), n + m, and where Y is not empty. The same for every interval of that size: the search asks 30,000 of them
    (`bench/history.py`), a quarter of whose cost was building these, so those of small sizes are kept."""
    taus = np.arange(1, size)[:, None]
    kappas = np.arange(2, size + 1)[None, :]
    n, m = taus, kappas - taus
    grids = (taus, kappas, n, m, np.maximum(n - 1, 1), np.maximum(m - 1, 1), n + m, m > 0)
    for grid in grids:
        grid.flags.writeable = False  # a kept one is shared by every call of its size
    return grids


KEPT_GRID = 64  # interval sizes whose grids are kept, 1.5 MB for all (the split step's windows are 30 points)
_kept_grid = functools.lru_cache(maxsize=None)(_grid)


def best_split(w: np.ndarray, start: int, stop: int) -> tuple[int, float]:
    """The τ that maximises q̂ over τ and κ in z[start:stop] (the paper's τ̂), and that maximum."""
    tau, _, q = best_pair(w, start, stop)
    return tau, q


def best_pair(w: np.ndarray, start: int, stop: int) -> tuple[int, int, float]:
    """The τ and κ that maximise q̂ in z[start:stop], and that maximum."""
    q = qhat(w, start, stop)
    row, col = np.unravel_index(np.argmax(q), q.shape)
    return start + 1 + int(row), start + 2 + int(col), float(q[row, col])


def bisect(z: np.ndarray, significant: Callable[[int, int, int], bool]) -> list[int]:
    """Split points of z, sorted: E-divisive's hierarchical bisection.

    Each round takes, over the current intervals, the candidate with the largest q̂ and asks
    `significant(start, τ, κ)` about the two samples its q̂ compared, z[start:τ] and z[τ:κ] (bounds, so
    that a caller may test what goes with the points: the calls behind a rate); the first refusal ends the
    search, as in the paper (a weaker candidate elsewhere would be even less likely to pass). Testing
    against z[τ:κ] rather than the whole rest of the interval matters for a level that goes up and comes
    back (a regression, then its fix): the rest mixes both levels and hides the first step from a t-test.
    """
    w = pair_sums(z)
    bounds = [0, len(z)]
    candidates: dict[tuple[int, int], tuple[int, int, float]] = {}
    while True:
        for start, stop in pairwise(bounds):
            if stop - start >= 2 and (start, stop) not in candidates:
                candidates[start, stop] = best_pair(w, start, stop)
        if not candidates:
            return bounds[1:-1]
        (start, stop), (tau, kappa, _) = max(candidates.items(), key=lambda item: item[1][2])
        if not significant(start, tau, kappa):
            return bounds[1:-1]
        del candidates[start, stop]
        bounds.insert(bounds.index(stop), tau)
