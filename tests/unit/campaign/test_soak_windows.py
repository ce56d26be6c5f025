"""A soak's span cut into windows: equal, contiguous, as close to soak_window_s as the span allows."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tasks.bundle.soak import soak_target_value, windows
from tasks.campaign.soak import window_iterations


@pytest.mark.parametrize(("span_s", "window_s", "count"), [(16.5, 2, 8), (17.1, 2, 9), (1.0, 2, 1), (43210, 600, 72)])
def test_windows_are_equal_and_cover_the_span(span_s, window_s, count):
    cut = windows(100.0, 100.0 + span_s, window_s)
    lengths = [end - start for start, end in cut]
    assert len(cut) == count and cut[0][0] == 100.0 and cut[-1][1] == 100.0 + span_s
    assert max(lengths) - min(lengths) < 1e-9 and all(a[1] == b[0] for a, b in zip(cut, cut[1:]))


def test_window_iterations_keep_milliseconds_and_give_the_warm_up_to_the_first():
    start = datetime(2026, 12, 1, 2, 0, 0, 123000, tzinfo=timezone.utc)
    its = window_iterations(1, start, start + timedelta(seconds=16.5), {"vus": 2}, 2, 0.5)
    assert [it.index for it in its] == list(range(1, 9)) and its[0].start == start
    assert all(it.start.microsecond % 1000 == 0 and it.end.microsecond % 1000 == 0 for it in its)
    assert all(a.end == b.start for a, b in zip(its, its[1:])) and its[-1].end == start + timedelta(seconds=16.5)
    assert [it.warmup_s for it in its] == [0.5] + [0] * 7


def test_the_target_is_rounded_to_a_whole_number_of_at_least_one():
    assert [soak_target_value(level, 0.8) for level in (8, 3, 1, 1974.78)] == [6, 2, 1, 1580]
