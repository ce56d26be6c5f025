"""A soak's part of the report: where its load came from, its drift verdicts (mart soak_drift) and the trend
charts of its windows, each metric with the straight line the verdict was fitted with."""

from __future__ import annotations

import pandas as pd

from tasks.report.charts import Chart, _encode, _figure, _legend, _naive_utc, _time_axis
from tasks.report.data import ReportData
from tasks.report.drift_words import DRIFT_COLUMNS, drift_cells, trend_word
from tasks.report.fmt import number
from tasks.report.html import Column, esc, figure, frame_table, status_cell, table

METRICS = [("avg_ms", "average (ms)"), ("p95_ms", "p95 (ms)"), ("calls_per_s", "throughput (calls/s)"),
           ("error_rate", "error rate"), ("old_gen_after_gc_kb", "old gen after GC (KB)")]
SUMMARY_COLUMNS = [("side", ""), ("windows", "count"), ("calls", "count"), ("errors", "count"), ("error_rate", "rate"),
                   ("calls_per_s", "calls/s"), ("avg_ms", "ms"), ("p95_ms", "ms"), ("max_ms", "ms"), ("threads", "count"),
                   ("message_size", "count"), ("load", "")]
HOST_COLUMNS = [("host", ""), ("role", ""), ("samples", "count"), ("cpu_busy_avg_pct", "%"), ("cpu_busy_max_pct", "%"),
                ("mem_free_min_kb", "kb"), ("blocks_in_per_s", "/s"), ("blocks_out_per_s", "/s"),
                ("disk_util_max_pct", "%"), ("disk_read_bytes_per_s", "bytes/s"), ("disk_write_bytes_per_s", "bytes/s"),
                ("net_rx_bytes_per_s", "bytes/s"), ("net_tx_bytes_per_s", "bytes/s")]


def is_soak(data: ReportData) -> bool:
    """Whether the run is a soak (its manifest has `soak`)."""
    return not data.frames.get("report_soak", pd.DataFrame()).empty


def target_sentence(data: ReportData) -> str | None:
    """Where the soak's load came from (load.target_from), or None when it was written in the campaign."""
    soak = data["report_soak"].iloc[0]
    if pd.isna(soak["source_run_id"]):
        return None
    series = f", series {soak['source_series']}" if soak["source_series"] else ""
    return (f"The load came from run {soak['source_run_id']} (campaign {soak['source_campaign']}{series}): its highest "
            f"throughput, {number(soak['max_calls_per_s'], 'calls/s')} at iteration {int(soak['max_iteration'])} "
            f"({soak['max_load']}); {soak['target_key']} {number(soak['max_load_level'])} there x "
            f"{number(soak['share_of_max'])} gives {soak['target_key']}={number(soak['target_value'])}.")


def drift_sentence(data: ReportData) -> str | None:
    """One sentence of the soak's verdicts: how many of each, and every drifting trend by name, whether it
    worsens or improves, in a period it reads in (`+5.5 %/s`, not `+1.97e+04 %/h`)."""
    drift = data.frames.get("soak_drift", pd.DataFrame())
    if drift.empty:
        return None
    counts = drift["verdict"].value_counts()
    said = ", ".join(f"{counts[word]} {word}" for word in ("drifting", "stable", "inconclusive", "too short to judge")
                     if word in counts)
    drifting = [f"{r['metric']} of {r['side']} {r['host']} {trend_word(r['metric'], r['slope_pct_per_h'])} "
                f"{drift_cells(r)[4]}" for r in drift[drift["verdict"] == "drifting"].to_dict("records")]
    return f"Soak drift over {int(drift['windows'].max())} windows: {said}" + (
        f"; drifting: {'; '.join(drifting)}." if drifting else ".")


def drift_rows(data: ReportData) -> list[list[str]]:
    """The verdicts as formatted cells (DRIFT_COLUMNS)."""
    return [drift_cells(r) for r in data["soak_drift"].to_dict("records")]


def soak_chart(data: ReportData) -> Chart | None:
    """One panel per metric: each scope's value per window and its fitted line (dashed)."""
    windows = data.frames.get("report_soak_windows", pd.DataFrame())
    if windows.empty:
        return None
    drift = data["soak_drift"].set_index(["metric", "side", "host", "subject"])
    shown = [(metric, label) for metric, label in METRICS if windows[metric].notna().any()]
    fig, axes = _figure(len(shown), height=2.2)
    for ax, (metric, label) in zip(axes, shown):
        for (side, host, subject), group in windows.groupby(["side", "host", "subject"], sort=True):
            points = group[group[metric].notna()]
            if points.empty:
                continue
            at = _naive_utc(points["middle_at"])
            line = ax.plot(at, points[metric], "o-", ms=3, lw=1, label=f"{side} {host}")[0]
            key = (metric, side, host, subject)
            if key in drift.index and pd.notna(drift.loc[key, "slope_per_h"]):
                hours = (at - at.iloc[0]).dt.total_seconds() / 3600  # the OLS line passes through the means
                fitted = points[metric].mean() + drift.loc[key, "slope_per_h"] * (hours - hours.mean())
                ax.plot(at, fitted, "--", lw=1, color=line.get_color())
        ax.set_ylabel(label, fontsize=8)
        _legend(ax)
    _time_axis(axes[-1])
    return Chart("soak", "Soak trends per window", "report query report_soak_windows; dashed: the fitted trend "
                 "of mart soak_drift", _encode(fig))


def sentences(data: ReportData) -> list[str]:
    """The soak's sentences for the summary: where its load came from, and its drift verdicts."""
    if not is_soak(data):
        return []
    return [s for s in (target_sentence(data), drift_sentence(data)) if s]


def section(data: ReportData) -> str:
    """The soak in one row per side, its resources per host, where the load came from, the verdicts and the
    trend charts."""
    parts = []
    summary = data.frames.get("report_soak_summary", pd.DataFrame())
    if not summary.empty:
        parts.append(frame_table(summary, SUMMARY_COLUMNS)
                     + '<p class="note">report query report_soak_summary: every window after its warm-up; threads: '
                       "the load's vus, threads or max_vus.</p>")
    said = sentences(data)
    if said:
        parts.append("<ul>" + "".join(f"<li>{esc(s)}</li>" for s in said) + "</ul>")
    chart = soak_chart(data)
    if chart:
        parts.append(figure(chart))
    if not data["soak_drift"].empty:
        columns = [Column(name, name in ("windows", "slope", "95 % interval", "R²", "tolerance")) for name in DRIFT_COLUMNS]
        rows = drift_rows(data)
        parts.append(table(columns, [row[:-1] + [status_cell(row[-1])] for row in rows], raw={len(DRIFT_COLUMNS) - 1}))
    parts.append('<p class="note">mart soak_drift: OLS over the windows; slopes in % of the soak\'s mean (error rate: '
                 'percentage points, old generation: % of its capacity) per hour, minute or second, whichever reads '
                 'without thousands; a rise in latency, errors or old generation is worsening, a rise in throughput '
                 'improving. "stable" when the whole 95 % interval is within the tolerance, "drifting" when it is '
                 'entirely outside.</p>')
    hosts = data.frames.get("report_soak_hosts", pd.DataFrame())
    if not hosts.empty:
        parts.append("<h3>Resources per host over the soak</h3>" + frame_table(hosts, HOST_COLUMNS)
                     + '<p class="note">report query report_soak_hosts: CPU busy = user + system, memory and blocks '
                       "from vmstat; disks (the busiest one's utilisation, bytes over all) from sar -d or procfs; "
                       "network (bytes over all interfaces, loopback included) from sar -n DEV or procfs.</p>")
    return "".join(parts)
