"""A series of a plan as the change-point search reads it (pooled.py, rate_groups.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tasks.history.changepoints import Change


@dataclass
class Series:
    """One series of a plan: its key, the place of each of its runs among the plan's runs, its values."""

    key: dict
    positions: np.ndarray
    values: np.ndarray
    calls: np.ndarray
    changes: list[Change] = field(default_factory=list)  # its own change points (indices into values)
    runs: np.ndarray | None = None  # the run ids, for the caller
    clean: np.ndarray | None = None  # its values without its one-night outliers (NaN), once for every group
    confirmed: set[int] = field(default_factory=set)  # its own changes at a group's shift: they stay when retested
    claimed: set[tuple[int, float]] = field(default_factory=set)  # (plan position, direction) of its groups' shifts
