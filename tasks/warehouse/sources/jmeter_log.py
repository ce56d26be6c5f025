"""Reader for JMeter's summariser lines (`kind: jmeter_log`: a jmeter.log, or JMeter's stdout).

JMeter prints, every summariser interval, a `+` line for the last window and a `=` line for the running
total, e.g. `summary +   1003 in 00:00:13 =   76.8/s Avg:   148 Min:   123 Max:   396 Err:     0 (0.00%)
Active: 16 Started: 16 Finished: 0`. JMeter <= 2.13 wrote the window as `in    43s`; the numbers follow
the JVM's locale (`41,1/s`); the summariser's name (`summary`, `Generate Summary Results`...) is free.
The log line's own time prefix (`2017-08-18 17:23:43,981` or `2014/05/22 14:50:15`) is local time in the
manifest's zone; stdout lines have none and get no time (and so no iteration unless the source is pinned).
Every other line is ignored; a line that starts like a summariser line but does not parse is rejected.
Several summarisers may write to one log: each line keeps its summariser's name.
The file is small, so it is parsed in Python; the rows go through `sql/staging/stg_jmeter__summaries.sql`.
"""

from __future__ import annotations

import pandas as pd

from tasks.bundle.jmeter_summariser import COUNT_COLUMNS, NUMBER_COLUMNS, parse_lines
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources.base import (
    SourceContext,
    SourceResult,
    reject,
    set_load_context,
)


def read(ctx: SourceContext) -> SourceResult:
    """Load the summariser lines of one log into jmeter_summaries; damaged summariser lines are rejected."""
    rows, rejects = parse_lines(ctx.file)
    reject(ctx, rejects)
    if not rows:
        return SourceResult(rejected=len(rejects), notes=(f"{ctx.source.path}: no summariser lines",))
    ctx.con.from_df(_frame(rows)).create_view("raw_jmeter_summaries", replace=True)
    set_load_context(ctx, zone=ctx.manifest.timezone)
    build_model(ctx.con, "stg_jmeter__summaries")
    build_model(ctx.con, "jmeter_summaries")
    drop_model(ctx.con, "stg_jmeter__summaries")
    ctx.con.execute("drop view raw_jmeter_summaries")
    untimed = sum(1 for row in rows if row["logged_local"] is None)
    notes = (f"{ctx.source.path}: {untimed} summariser lines without a time prefix (stdout?)",) if untimed else ()
    return SourceResult(rows=len(rows), rejected=len(rejects), notes=notes)


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "line_no": pd.Series([row["line_no"] for row in rows], dtype="int64"),
            "logged_local": pd.Series([row["logged_local"] for row in rows], dtype="datetime64[us]"),
            "summariser": pd.Series([row["summariser"] for row in rows], dtype=object),
            "kind": pd.Series([row["kind"] for row in rows], dtype=object),
        }
    )
    for name in NUMBER_COLUMNS:
        frame[name] = pd.Series([row[name] for row in rows], dtype="float64")
    for name in COUNT_COLUMNS:
        frame[name] = pd.Series([row[name] for row in rows], dtype="Int64")
    return frame
