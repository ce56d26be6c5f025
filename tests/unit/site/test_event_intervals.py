"""The event page's 95 % intervals of each segment's median, against intervals computed here with numpy and scipy
from the `series` view: each change point's segments rebuilt with pandas (the series oldest first, cut at its
change points, outliers left out), and the order-statistic interval of the median with k from scipy's binomial."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from tests.site_history import frame
from tests.unit.site.tables import as_dicts, read_page, shown_value

KEY = ["campaign", "scenario", "plan_id", "side", "host", "iteration", "label", "metric"]


def median_interval(values: np.ndarray) -> tuple[float, float] | None:
    """[x(k), x(n+1-k)] with k the largest rank whose two tails hold at most 5 %; None when no k exists."""
    n = values.size
    ranks = [k for k in range(1, n // 2 + 1) if binom.cdf(k - 1, n, 0.5) <= 0.025]
    if not ranks:
        return None
    ordered = np.sort(values)
    return float(ordered[ranks[-1] - 1]), float(ordered[n - ranks[-1]])


def expected_segments(site_history) -> dict[str, dict[str, np.ndarray]]:
    """{change_id: {'before': values, 'after': values}} rebuilt from the series and the change points."""
    series = frame(site_history, "select * from series").sort_values(["run_started_at", "run_id"])
    changes = frame(site_history, "select * from change_points")
    out = {}
    for key, points in series.groupby(KEY, sort=False):
        mine = changes[(changes[KEY] == list(key)).all(axis=1)]
        if mine.empty:
            continue
        run_ids = list(points["run_id"])
        values = points["value"].to_numpy()
        outlier = np.isin(run_ids, mine.loc[mine["kind"] == "outlier", "run_id"])
        splits = sorted(run_ids.index(r) for r in mine.loc[mine["kind"] == "change", "run_id"])
        for change in mine.to_dict("records"):
            at = run_ids.index(change["run_id"])
            start = max([s for s in splits if s < at], default=0)
            stop = min([s for s in splits if s > at], default=len(run_ids))
            clean = ~outlier & (np.arange(len(run_ids)) >= start) & (np.arange(len(run_ids)) < stop)
            if change["kind"] == "change":
                before, after = clean & (np.arange(len(run_ids)) < at), clean & (np.arange(len(run_ids)) >= at)
                out[change["change_id"]] = {"before": values[before], "after": values[after]}
            else:
                out[change["change_id"]] = {"before": values[clean]}
    return out


def shown(text: str) -> tuple[float, float] | None:
    """'26.842 – 28.175 (10 runs)' as numbers; None for '(5 runs: too few)'."""
    if "too few" in text:
        return None
    low, high = text.split(" (")[0].split(" – ")
    return shown_value(low), shown_value(high)


def test_each_segment_shows_the_95_percent_interval_of_its_median(site, site_history):
    segments = expected_segments(site_history)
    points = frame(site_history, "select * from change_points")
    assert len(segments) == len(points)
    checked = {"interval": 0, "too few": 0}
    for event_id, members in points.groupby("event_id"):
        reader = read_page((site.out / f"campaigns/{members['campaign'].iloc[0]}/events/{event_id}.html").read_text())
        (table,) = [t for t in reader.tables if "before 95 % interval" in t[0]]
        rows = {(r["side"], r["host"], r["iteration"], r["label"], r["metric"]): r for r in as_dicts(table)}
        for m in members.to_dict("records"):
            row = rows[(m["side"], m["host"], str(m["iteration"]), m["label"], m["metric"])]
            for side, values in segments[m["change_id"]].items():
                assert np.median(values) == pytest.approx(m[f"{side}_value"])  # the segment the median shown is of
                assert f"({values.size} runs" in row[f"{side} 95 % interval"]
                expected, got = median_interval(values), shown(row[f"{side} 95 % interval"])
                if expected is None:
                    assert got is None
                    checked["too few"] += 1
                    continue
                assert got == pytest.approx(expected, rel=1e-3, abs=1e-3)
                checked["interval"] += 1
            if m["kind"] == "outlier":
                assert row["after 95 % interval"] == ""  # one value: no interval
    assert checked["interval"] > 20 and checked["too few"] > 0


def test_the_reference_interval_has_the_textbook_ranks():
    """The check's own interval: none under 6 values, [x(1), x(6)] of 6, [x(2), x(9)] of 10 (coverage 97.9 %)."""
    assert median_interval(np.arange(5.0)) is None  # 2 x 2^-5 > 5 %
    assert median_interval(np.arange(6.0)) == (0.0, 5.0)  # 2 x 2^-6 = 3.1 %
    assert median_interval(np.arange(1.0, 11.0)) == (2.0, 9.0)  # n = 10: k = 2
