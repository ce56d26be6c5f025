"""The report's History section: trend charts of the campaign's key series and its change points.

Reads what the history analysis stored (`sql/reports/report_history.sql`, `report_changes.sql`); the last
HISTORY_RUNS runs of the run's plan up to the run, excluded runs in grey, change points as dashed lines with
their % and the labels that changed, outliers as red crosses.
"""

from __future__ import annotations

import pandas as pd

from tasks.report.charts import Chart, _encode, _figure, _legend, _naive_utc
from tasks.report.data import HISTORY_RUNS, ReportData
from tasks.report.fmt import is_missing, metric_unit, number
from tasks.report.html import Column, details, figure, status_cell, table

METRICS = {"p95_ms": "p95 (ms)", "calls_per_s": "throughput (calls/s)", "error_rate": "error rate"}
SIDE_STYLE = {"server": "-", "client": "--"}


def history_chart(data: ReportData) -> Chart | None:
    """One panel per key metric; a line per side and iteration; changes, outliers and exclusions marked."""
    points = data.frames.get("report_history", pd.DataFrame())
    if points.empty or points["run_id"].nunique() < 2:
        return None
    metrics = [m for m in METRICS if (points["metric"] == m).any()]
    fig, axes = _figure(len(metrics), 2.4)
    for ax, metric in zip(axes, metrics):
        rows = points[points["metric"] == metric]
        for (side, iteration), group in rows.groupby(["side", "iteration"], sort=True):
            at = _naive_utc(group["run_started_at"])
            kept = ~group["is_excluded"].astype(bool)
            line = ax.plot(at[kept], group["value"][kept], SIDE_STYLE.get(side, "-"), marker=".", lw=1,
                           label=f"{side} it {iteration}")[0]
            ax.scatter(at[~kept], group["value"][~kept], color="#bbbbbb", zorder=3, s=18)
            _mark_changes(ax, group, at, line.get_color())
        ax.set_ylabel(METRICS[metric], fontsize=8)
        ax.set_ylim(bottom=0)
        _legend(ax)
    axes[-1].set_xlabel("run started (UTC); grey: excluded runs; dashed: change points; x: outliers")
    return Chart("history", "History of the key series",
                 f"view series_values, the last {HISTORY_RUNS} runs of this plan, over all hosts and labels; "
                 "change points and outliers from change_points", _encode(fig))


def _mark_changes(ax, group: pd.DataFrame, at: pd.Series, color: str) -> None:
    for (when, record) in zip(at, group.to_dict("records")):
        if record["kind"] == "change":
            ax.axvline(when, color=color, ls=":", lw=1)
            text = number(record["change_pct"], "pct") if not is_missing(record["change_pct"]) else "from 0"
            ax.annotate(text, (when, record["value"]), xytext=(3, 6), textcoords="offset points", fontsize=7,
                        color=color)
        elif record["kind"] == "outlier":
            ax.scatter([when], [record["value"]], marker="x", color="#cf222e", zorder=4, s=30)


def history(data: ReportData, chart: Chart | None) -> str:
    """The trend charts, then the events of the shown runs (the ones this run found first on top), then
    each series' change points, folded."""
    events = data.frames.get("report_events", pd.DataFrame())
    changes = data.frames.get("report_changes", pd.DataFrame())
    points = data.frames.get("report_history", pd.DataFrame())
    if points.empty:
        return ('<p class="note">No history: the campaign has no other run of this plan yet, or the warehouse '
                'predates the history tables.</p>')
    parts = [figure(chart)] if chart else []
    new = int(events["is_new_here"].sum()) if not events.empty else 0
    parts.append(f"<p>{new} new regression{'s' if new != 1 else ''} found by this run's analysis; "
                 f"{len(events)} events ({len(changes)} change points and outliers of single series) in the last "
                 f"{HISTORY_RUNS} runs.</p>")
    if not events.empty:
        parts.append(_events_table(events))
        parts.append(details(f"Each series ({len(changes)})", _changes_table(changes)))
    parts.append('<p class="note">view change_events (one per shift), change_points (one per series): before '
                 'and after are segment medians; triage with <code>perfcampaign triage EVENT_ID</code> '
                 '(docs/history.md).</p>')
    return "".join(parts)


def _events_table(events: pd.DataFrame) -> str:
    columns = [Column(name) for name in ("", "event", "run", "series")] + \
        [Column("median %", True), Column("largest %", True), Column("status"), Column("labels changed")]
    rows = []
    for record in events.to_dict("records"):
        word = "worse" if record["direction"] == "regression" else "better"
        rows.append([status_cell("NEW" if record["is_new_here"] else ""), f"{record['kind']} ({word})",
                     record["run_id"], f"{record['series']}: {record['sides']}: {record['metrics']}",
                     number(record["change_pct"], "pct"), number(record["largest_change_pct"], "pct"),
                     f"{record['status']} {record['event_id']}",
                     "" if is_missing(record["label_changes"]) else record["label_changes"]])
    return table(columns, rows, raw={0})


def _changes_table(changes: pd.DataFrame) -> str:
    columns = [Column(name) for name in ("", "change", "series", "run", "before", "after")] + \
        [Column("%", True), Column("status"), Column("event"), Column("labels changed")]
    rows = []
    for record in changes.to_dict("records"):
        unit = metric_unit(record["metric"])
        word = "worse" if record["direction"] == "regression" else "better"
        rows.append([status_cell("NEW" if record["is_new_here"] else ""), f"{record['kind']} ({word})",
                     f"{record['side']} {record['host']} it {record['iteration']} {record['label']} {record['metric']}",
                     record["run_id"], number(record["before_value"], unit), number(record["after_value"], unit),
                     number(record["change_pct"], "pct"), f"{record['status']} {record['change_id']}",
                     record["event_id"], "" if is_missing(record["label_changes"]) else record["label_changes"]])
    return table(columns, rows, raw={0})
