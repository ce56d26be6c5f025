"""JMeter's own summary beside the warehouse's figures, per iteration (sql/reports/report_jmeter_summary.sql):
a reader sees at once that the tool and the warehouse count the same calls over the same window."""

from __future__ import annotations

import pandas as pd

from tasks.report.data import ReportData
from tasks.report.fmt import number
from tasks.report.html import Column, table

COLUMNS = [Column("iteration", True), Column("generators", True), Column("JMeter calls", True),
           Column("warehouse calls", True), Column("JMeter calls/s", True), Column("warehouse calls/s", True),
           Column("JMeter errors", True), Column("warehouse errors", True)]


def has_summary(data: ReportData) -> bool:
    """Whether the run has JMeter summariser totals to show."""
    return not data.frames.get("report_jmeter_summary", pd.DataFrame()).empty


def section(data: ReportData) -> str:
    """The table, with how to read it."""
    frame = data["report_jmeter_summary"].astype("float64")  # numbers as floats (pandas gives numpy ints)
    rows = [
        [number(row.iteration, "count"), number(row.generators, "count"), number(row.jmeter_calls, "count"),
         number(row.warehouse_calls, "count"), number(row.jmeter_calls_per_s, "calls/s"),
         number(row.warehouse_calls_per_s, "calls/s"), number(row.jmeter_errors, "count"),
         number(row.warehouse_errors, "count")]
        for row in frame.itertuples()
    ]
    note = ("<p>JMeter's last <code>summary =</code> line of each generator (summed over the generators) beside "
            "the warehouse's client side of the same iteration. Both count from JMeter's test start to the last "
            "call's end; JMeter prints its rate to one decimal.</p>")
    return note + table(COLUMNS, rows)
