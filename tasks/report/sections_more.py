"""The report's sections beyond the requests: the baseline, hosts and JVMs, data expectations, findings."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tasks.report.charts import Chart
from tasks.report.data import ReportData
from tasks.report.fmt import is_missing, metric_unit, number, plain
from tasks.report.html import Column, details, esc, figure, frame_table, status_cell, table
from tasks.report.summary import comparison_sentence
from tasks.settings import VALIDATION_PAGE


def baseline(data: ReportData) -> str:
    """The requirement table in the form users publish, then every metric per iteration, side and label."""
    if data.baseline is None and data.baseline_note:
        return f'<p class="note">{esc(data.baseline_note)}</p>'
    if data.baseline is None:
        return ('<p class="note">No baseline: no earlier passing run of this campaign and scenario in the warehouse '
                '(name one with <code>perfcampaign report RUN --baseline RUN</code> or the run label '
                '<code>baseline</code>).</p>')
    parts = [f"<p>{esc(comparison_sentence(data))}</p>"]
    if data.requirement_changes:
        columns = [Column("test"), Column("unit"), Column("requirement"), Column("expectation"), Column("before", True),
                   Column("after", True), Column("% change", True), Column("verdict")]
        rows = [[c.test, c.unit, c.requirement, c.expectation, plain(c.before, c.unit), plain(c.after, c.unit),
                 number(c.change_pct, "pct"), status_cell(c.verdict)] for c in data.requirement_changes]
        parts.append(table(columns, rows, raw={7}))
    columns = [Column("iteration", True), Column("load before"), Column("load now"), Column("side"), Column("metric"),
               Column("before", True), Column("now", True), Column("% change", True), Column("test"),
               Column("p", True), Column("")]

    def rows_of(changes):
        return [[str(c.iteration), c.load_a or "", (c.load_b or "") + (" (differs)" if c.load_a != c.load_b else ""),
                 c.side, c.metric,
                 number(c.a, metric_unit(c.metric)), number(c.b, metric_unit(c.metric)), number(c.change_pct, "pct"),
                 c.test, number(c.p_value, "p"), status_cell(c.direction)] for c in changes]

    whole = [c for c in data.comparison if c.label == "(all)"]
    parts.append("<h3>Every metric, whole side</h3>" + table(columns, rows_of(whole), raw={10}))
    labels = [c for c in data.comparison if c.label != "(all)"]
    if labels:
        by_label: dict[str, list] = {}
        for change in labels:
            by_label.setdefault(change.label, []).append(change)
        body = "".join(f"<h3>{esc(label)}</h3>" + table(columns, rows_of(changes), raw={10})
                       for label, changes in by_label.items())
        parts.append(details(f"Per label ({len(by_label)} labels)", body))
    if data.host_changes:
        parts.append(details(f"Hosts and JVMs ({len({c.host for c in data.host_changes})} hosts)", _host_changes(data)))
    parts.append('<p class="note">Iterations are matched by index. Values and % change come from the warehouse; '
                 'the tests use the raw samples: Welch t (avg), a bootstrap interval of the percentile '
                 '(p50, p90, p95, p99), Fisher (error rate), Poisson rates (throughput); beyond noise at alpha 0.01; '
                 'no test on too few samples.</p>')
    return "".join(parts)


def _host_changes(data: ReportData) -> str:
    """Highest and mean CPU, heap and threads per iteration and host, before and now (compare_hosts)."""
    columns = [Column("iteration", True), Column("host"), Column("figure"), Column("before", True), Column("now", True),
               Column("% change", True), Column("test"), Column("p", True), Column("")]
    rows = [[str(c.iteration), c.host, c.metric, number(c.a, metric_unit(c.metric)), number(c.b, metric_unit(c.metric)),
             number(c.change_pct, "pct"), c.test, number(c.p_value, "p"), status_cell(c.direction)]
            for c in data.host_changes]
    return table(columns, rows, raw={8}) + ('<p class="note">vmstat (CPU busy, % of all CPUs), jstat (heap used: '
                                           'eden, survivors and old generation), pidstat/procfs (threads); a highest '
                                           'value is one sample: no test.</p>')


HOST_COLUMNS = [("host", ""), ("role", ""), ("iteration", "count"), ("samples", "count"), ("cpu_user_avg", "%"),
                ("cpu_system_avg", "%"), ("cpu_idle_avg", "%"), ("cpu_idle_min", "%"), ("cpu_wait_avg", "%"),
                ("run_queue_max", ""), ("blocks_in_per_s", "/s"), ("blocks_out_per_s", "/s"), ("mem_free_min_kb", "kb"),
                ("context_switches_per_s", "/s")]
JVM_COLUMNS = [("host", ""), ("source_path", ""), ("iteration", "count"), ("samples", "count"),
               ("young_gc_count", "count"), ("full_gc_count", "count"), ("gc_time_s", "s"), ("gc_overhead_pct", "%"),
               ("old_used_start_kb", "kb"), ("old_used_end_kb", "kb"), ("old_used_max_kb", "kb"),
               ("old_capacity_kb", "kb"), ("metaspace_used_max_kb", "kb")]
CONTAINER_COLUMNS = [("host", ""), ("container", ""), ("iteration", "count"), ("samples", "count"),
                     ("cpu_pct_avg", "%"), ("cpu_pct_max", "%"), ("mem_used_max_bytes", "bytes"),
                     ("mem_limit_bytes", "bytes"), ("mem_trend_bytes_per_h", "bytes/h"), ("net_in_bytes", "bytes"),
                     ("net_out_bytes", "bytes"), ("pids_max", "")]

NETWORK_COLUMNS = [("host", ""), ("interface", ""), ("iteration", "count"), ("samples", "count"), ("rx_gbps", ""),
                   ("tx_gbps", ""), ("rx_gbps_max", ""), ("tx_gbps_max", ""), ("rx_packets_per_s", "/s"),
                   ("tx_packets_per_s", "/s")]
DISK_COLUMNS = [("host", ""), ("disk", ""), ("iteration", "count"), ("samples", "count"), ("util_pct_avg", "%"),
                ("util_pct_max", "%"), ("await_ms_avg", "ms"), ("transfers_per_s", "/s"),
                ("read_bytes_per_s", "bytes/s"), ("write_bytes_per_s", "bytes/s")]
PROCESS_COLUMNS = [("host", ""), ("command", ""), ("pid", ""), ("iteration", "count"), ("samples", "count"),
                   ("cpu_pct_avg", "%"), ("cpu_pct_max", "%"), ("cpu_share_pct_avg", "%"), ("threads_first", ""),
                   ("threads_last", ""), ("threads_max", ""), ("rss_max_kb", "kb")]


def _present(frame: pd.DataFrame, spec: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, unit) for name, unit in spec if name in frame.columns]


def hosts(data: ReportData, charts: dict[str, Chart]) -> str:
    """CPU per host, heap and GC per JVM, containers, network, disks and processes: charts, then tables."""
    parts = []
    for key, mart, spec, note in (
        ("cpu", "host_iteration_stats", HOST_COLUMNS, "mart host_iteration_stats (vmstat; blocks_in/out: "
                                                            "blocks read from and written to disks per second)"),
        ("jvm", "jvm_iteration_stats", JVM_COLUMNS, "mart jvm_iteration_stats (jstat)"),
        ("containers", "container_stats", CONTAINER_COLUMNS, "mart container_stats (docker stats; iteration empty: "
                                                              "the whole run; memory trend per hour)"),
        ("network", "host_network_stats", NETWORK_COLUMNS, "mart host_network_stats (sar -n DEV or procfs; iteration empty: "
                                                           "the whole run)"),
        ("disks", "host_disk_stats", DISK_COLUMNS, "mart host_disk_stats (sar -d or procfs; iteration empty: the whole run; "
                                                   "await weighted by transfers)"),
        ("processes", "process_stats", PROCESS_COLUMNS, "mart process_stats (pidstat or procfs; iteration empty: the whole run; "
                                                        "CPU % of one CPU, share of all CPUs)"),
    ):
        frame = data[mart]
        if key not in charts and frame.empty:
            continue
        parts.append(f"<h3>{esc(charts[key].title if key in charts else mart)}</h3>")
        if key in charts:
            parts.append(figure(charts[key]))
        if not frame.empty:
            parts.append(frame_table(frame, _present(frame, spec)) + f'<p class="note">{esc(note)}.</p>')
    return "".join(parts) or '<p class="note">No vmstat, jstat, docker stats, sar, pidstat or procfs in this run.</p>'


EXPECTATION_COLUMNS = ("suite", "expectation", "column", "severity", "success", "observed")


def expectations(data: ReportData) -> str:
    """The data expectations' results (table expectation_results), when the warehouse has them."""
    link = ""
    if data.validation_page:
        page = data.validation_page
        href = page if "://" in page or page == VALIDATION_PAGE else Path(page).resolve().as_uri()
        link = f'<p>Validation page: <a href="{esc(href)}">{esc(data.validation_page)}</a></p>'
    outcome = ""
    if data.validation and data.validation.get("success") is not None:
        word = "pass" if data.validation["success"] else "FAIL"
        outcome = (f"<p>Last validation {status_cell(word)} at {esc(number(data.validation.get('validated_at')))} UTC"
                   f" (table validations).</p>")
    frame = data.expectations
    if frame is None:
        return link + '<p class="note">This warehouse has no expectation_results table: expectations were not run.</p>'
    if frame.empty:
        return link + outcome + '<p class="note">No expectation results for this run.</p>'
    preferred = [c for c in EXPECTATION_COLUMNS if c in frame.columns]
    frame = frame[preferred] if preferred else frame
    columns = [Column(name, pd.api.types.is_numeric_dtype(frame[name]) and frame[name].dtype != bool)
               for name in frame.columns]
    rows = []
    for record in frame.to_dict("records"):
        rows.append([status_cell("pass" if value else "FAIL") if name == "success" and not is_missing(value)
                     else esc(number(value)) for name, value in record.items()])
    return link + outcome + table(columns, rows, raw=set(range(len(columns)))) + \
        '<p class="note">table expectation_results.</p>'


def findings(data: ReportData) -> str:
    """Health findings that need a look, then the checks that were fine (collapsed)."""
    frame = data["health_findings"]
    if frame.empty:
        return '<p class="note">No host metrics: no health checks.</p>'
    columns = [Column("severity"), Column("host"), Column("iteration", True), Column("area"), Column("rule"),
               Column("finding")]

    def rows_of(part: pd.DataFrame):
        return [[status_cell(r["severity"]), esc(r["host"]), esc(number(r["iteration"], "count")), esc(r["area"]),
                 esc(r["rule"]), esc(r["finding"])] for r in part.to_dict("records")]

    attention = frame[frame["severity"] != "ok"]
    fine = frame[frame["severity"] == "ok"]
    parts = [table(columns, rows_of(attention), raw=set(range(6))) if not attention.empty
             else '<p class="pass">Every health check is ok.</p>']
    if not fine.empty:
        parts.append(details(f"{len(fine)} checks ok", table(columns, rows_of(fine), raw=set(range(6)))))
    parts.append('<p class="note">mart health_findings; thresholds from the manifest (docs/warehouse-host-metrics.md).</p>')
    return "".join(parts)
