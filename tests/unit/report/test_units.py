"""Units defined once (tasks/report/units.py) and a soak's drift in words (tasks/report/drift_words.py)."""

from __future__ import annotations

import pytest

from tasks.report import units
from tasks.report.drift_words import drift_cells, trend_word
from tasks.report.fmt import number


@pytest.mark.parametrize(("name", "unit", "heading"), [
    ("mem_free_min_kb", "kb", "mem_free_min (MiB)"),
    ("avg_ms", "ms", "avg (ms)"),
    ("calls_per_s", "calls/s", "calls/s"),
    ("client_calls_per_s", "calls/s", "client calls/s"),
    ("offered_per_s", "calls/s", "offered calls/s"),
    ("blocks_in_per_s", "/s", "blocks_in/s"),
    ("error_rate", "rate", "error_rate (%)"),
    ("error_rate_with_dropped", "rate", "error_rate_with_dropped (%)"),
    ("read_bytes_per_s", "bytes/s", "read (MiB/s)"),
    ("cpu_idle_min", "%", "cpu_idle_min (%)"),
    ("gc_time_s", "s", "gc_time (s)"),
    ("calls", "count", "calls"),
    ("host", "", "host"),
])
def test_a_column_name_gives_its_unit_and_its_heading(name, unit, heading):
    assert units.unit_of(name) == unit
    assert units.heading(name) == heading


def test_values_are_shown_in_the_unit_the_heading_names():
    assert units.plain(18329000, "kb") == f"{18329000 / 1024:,.1f}"  # KB as MiB
    assert units.plain(0.0123, "rate") == "1.23"  # a fraction as %
    assert units.shown(0.0123, "rate") == 1.23
    assert units.plain(3 * 1024 * 1024, "bytes/s") == "3.0"
    assert number(0.0123, "rate") == "1.23 %" and number(400, "ms") == "400.0 ms"
    assert number(-20, "pct") == "-20.0 %" and number(18329000, "kb") == "17,899.4 MiB"


@pytest.mark.parametrize(("per_hour", "period", "divisor"), [
    (2.0, "h", 1), (-19700.0, "s", 3600), (3000.0, "min", 60), (100.0, "h", 1), (6000.0, "min", 60), (1e9, "s", 3600),
])
def test_a_drift_is_given_in_the_longest_period_it_reads_in(per_hour, period, divisor):
    assert units.per_time(per_hour) == (divisor, period)


def test_a_fall_in_latency_improves_and_a_fall_in_throughput_worsens():
    assert trend_word("avg_ms", -1.0) == "improving" and trend_word("p95_ms", 2.0) == "worsening"
    assert trend_word("calls_per_s", -1.0) == "worsening" and trend_word("calls_per_s", 1.0) == "improving"
    assert trend_word("error_rate", 0.5) == "worsening" and trend_word("avg_ms", 0.0) == "flat"
    row = {"metric": "avg_ms", "side": "server", "host": "app2", "windows": 6, "slope_pct_per_h": -19700.0,
           "ci_low_pct_per_h": -25200.0, "ci_high_pct_per_h": -14200.0, "r2": 0.91, "max_pct_per_h": 20000.0,
           "verdict": "drifting"}
    assert drift_cells(row) == ["avg_ms", "server app2", "6", "improving", f"{-19700 / 3600:+.1f} %/s",
                                f"{-25200 / 3600:+.1f} %/s to {-14200 / 3600:+.1f} %/s", "0.91",
                                f"±{20000 / 3600:.1f} %/s", "drifting"]
