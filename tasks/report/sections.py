"""The report's sections about the requests: summary, requirements, capacity, time line, iterations, client/server."""

from __future__ import annotations

import pandas as pd

from tasks.report import units
from tasks.report.charts import Chart
from tasks.report.data import ReportData
from tasks.report.fmt import is_missing, metric_unit, number
from tasks.report.html import Column, details, esc, figure, frame_table, status_cell, table
from tasks.report.summary import overall_verdict, saturated, summary_sentences
from tasks.warehouse.verdicts import verdict_word


def header(data: ReportData) -> str:
    """Run id, verdict, campaign, time window, bundle and labels."""
    run = data.run
    verdict = overall_verdict(data)
    badge = "pass" if verdict == "pass" else "skip" if verdict == "not judged" else "fail"
    labels = run.get("labels") or {}
    label_text = " · labels " + ", ".join(f"{k}={v}" for k, v in labels.items()) if labels else ""
    return (
        f'<h1>{esc(run["run_id"])} <span class="badge {badge}">{esc(verdict)}</span></h1>'
        f'<div class="meta">campaign <b>{esc(run["campaign"])}</b> · scenario {esc(run["scenario"] or "-")} · '
        f'status {esc(run["status"])} · {number(run["started_at"])} to {number(run["ended_at"])} UTC · '
        f'{number(run["iterations"], "count")} iterations · {number(run["server_requests"], "count")} server and '
        f'{number(run["client_requests"], "count")} client requests{esc(label_text)}</div>'
        f'<div class="meta">bundle: {esc(run["bundle_uri"])}'
        + (f' · reason: {esc(run["status_reason"])}' if run.get("status_reason") else "") + "</div>"
    )


def summary(data: ReportData) -> str:
    """The written summary, one sentence per finding, each with its number."""
    items = "".join(f"<li>{esc(sentence)}</li>" for sentence in summary_sentences(data))
    note = (f'<p class="note">{number(data.run["unmapped_requests"], "count")} requests fell outside every iteration '
            f'(kept, not judged); {number(data.run["rejected_lines"], "count")} log lines could not be read.</p>')
    return f'<ul class="summary">{items}</ul>{note}'


def requirements(data: ReportData) -> str:
    """Each requirement in a sentence, then the iteration x requirement matrix."""
    conclusions = data["conclusions"]
    sentences = conclusions[conclusions["topic"] == "requirement"]
    if sentences.empty:
        return '<p class="note">The run names no requirements.</p>'
    parts = ["<ul>" + "".join(f"<li>{status_cell(s)} — {esc(t)}</li>"
                              for s, t in zip(sentences["status"], sentences["sentence"])) + "</ul>"]
    verdicts = data["verdicts"]
    per_iteration = verdicts[verdicts["iteration"].notna()]
    requirement_ids = sorted(per_iteration["requirement_id"].unique())
    loads = dict(zip(data["report_iterations"]["iteration"], data["report_iterations"]["load"]))
    # iterations down, requirements across: a 3 x 3 matrix has 9 iterations and few requirements
    columns = [Column("iteration", True), Column("load")] + [Column(r, True) for r in requirement_ids]
    by_cell = {(r["requirement_id"], int(r["iteration"])): r for r in per_iteration.to_dict("records")}
    rows = []
    for i in sorted({iteration for _, iteration in by_cell}):
        cells = [str(i), esc(loads.get(i, ""))]
        for requirement in requirement_ids:
            r = by_cell.get((requirement, i))
            if r is None or is_missing(r["measured"]):
                cells.append('<span class="skip">no data</span>')
                continue
            word = verdict_word(r["passed"])
            expected = "" if is_missing(r["expect"]) else (  # the current expectation, judged beside the spec
                f"<br><span class=muted>expect {esc(r['op'])} {r['expect']:g}:</span> "
                + status_cell("not judged" if is_missing(r["expect_passed"]) else "met" if r["expect_passed"] else "missed"))
            cells.append(f"{esc(number(r['measured'], metric_unit(r['metric'])))}<br>"
                         f"{status_cell(word)} <span class=muted>{esc(number(r['calls_per_s'], 'calls/s'))}</span>"
                         + expected)
        rows.append(cells)
    parts.append(table(columns, rows, raw=set(range(len(columns)))))
    parts.append('<p class="note">mart verdicts: the measured value, the verdict and the throughput of each '
                 'iteration, and whether it met the current expectation (expect) where the requirement has one; an '
                 'iteration under the requirement\'s min_calls_per_s is not judged.</p>')
    return "".join(parts)


def capacity(data: ReportData, charts: dict[str, Chart]) -> str:
    """The knee and the highest throughput per side (a side with several series: a row per series), each
    side's caution once, the chart against load (one small panel per series), then the scaling of every step."""
    frame = data["capacity"]
    if frame.empty:
        return '<p class="note">No requests: no capacity to judge.</p>'
    conclusions = data["conclusions"]
    rows = conclusions[conclusions["topic"] == "capacity"]
    cautions = rows["subject"].str.endswith(" caution")
    several = frame.groupby("side")["series"].transform("size") > 1
    single_sides = set(frame[~several]["side"])
    lines = [f"<li>{esc(t)}</li>" for t, side in zip(rows[~cautions]["sentence"], rows[~cautions]["side"])
             if side in single_sides]
    lines += [f"<li>{status_cell('warn')} {esc(t)}</li>" for t in rows[cautions]["sentence"]]
    parts = ["<ul>" + "".join(lines) + "</ul>"] if lines else []
    if several.any():
        parts.append(series_table(frame[several]))
    if "load" in charts:
        parts.append(figure(charts["load"]))
    steps = []
    for record in frame.to_dict("records"):
        for point in record["points"]:
            word = "" if is_missing(point["scales"]) else ("scales" if point["scales"] else "saturated")
            steps.append([record["side"], str(point["iteration"]), point["series"] or "", number(point["load_level"]),
                          units.plain(point["calls_per_s"], "calls/s"), units.plain(point["load_gain_pct"], "pct"),
                          units.plain(point["throughput_gain_pct"], "pct"), status_cell(word),
                          units.plain(point["error_rate"], "rate"),
                          units.plain(point["calls_per_s_per_instance"], "calls/s")])
    columns = [Column("side"), Column("iteration", True), Column("series"), Column("load level", True),
               Column("calls/s", True), Column("load gain (%)", True), Column("throughput gain (%)", True),
               Column("step"), Column("failures (%)", True), Column("per instance (calls/s)", True)]
    if not any(row[-1] for row in steps):  # no capacity.instance_key: no such column
        columns, steps = columns[:-1], [row[:-1] for row in steps]
    table_html = table(columns, steps, raw={7})
    parts.append(details(f"Every step ({len(steps)})", table_html) if several.any() else table_html)
    parts.append(f'<p class="note">mart capacity: a step scales when its throughput gain is at least '
                 f'{esc(number(frame["min_scaling"].iloc[0]))} x its load gain (manifest capacity.min_scaling).</p>')
    return "".join(parts)


def _level_only(load: str, series: str) -> str:
    """A load without the keys its series already says (`message_size=7 vus=4` in series `message_size=7`: `vus=4`)."""
    said = set((series or "").split(" "))
    return " ".join(item for item in load.split(" ") if item not in said)


def series_table(frame: pd.DataFrame) -> str:
    """One row per side and series, in the order of the series' values: verdict, knee, highest, why."""
    columns = [Column("side"), Column("series"), Column("verdict"), Column("knee it", True), Column("knee load"),
               Column("knee calls/s", True), Column("highest calls/s", True), Column("at it", True), Column("why")]
    rows = []
    for r in frame.to_dict("records"):
        word = {True: "saturated", False: "scales", None: "not judged"}[saturated(r)]
        rows.append([esc(r["side"]), esc(r["series"]), status_cell(word), esc(number(r["knee_iteration"], "count")),
                     esc(_level_only(number(r["knee_load"]), r["series"])), esc(units.plain(r["knee_calls_per_s"], "calls/s")),
                     esc(units.plain(r["max_calls_per_s"], "calls/s")), esc(number(r["max_iteration"], "count")),
                     esc(r["reason"])])
    return table(columns, rows, raw=set(range(len(columns))))


def timeline(charts: dict[str, Chart]) -> str:
    """The per-minute chart."""
    return figure(charts["minutes"]) if "minutes" in charts else '<p class="note">No requests.</p>'


ITERATION_COLUMNS = [("iteration", "count"), ("side", ""), ("host", ""), ("calls", "count"), ("errors", "count"),
                     ("error_rate", "rate"), ("calls_per_s", "calls/s"), ("avg_ms", "ms"), ("p50_ms", "ms"),
                     ("p90_ms", "ms"), ("p95_ms", "ms"), ("p99_ms", "ms"), ("max_ms", "ms")]
STATUS_COLUMNS = [("iteration", "count"), ("side", ""), ("host", ""), ("status_code", ""), ("calls", "count"),
                  ("calls_per_s", "calls/s"), ("slow_calls", "count"), ("avg_ms", "ms"), ("p95_ms", "ms"), ("max_ms", "ms")]


OFFERED_COLUMNS = [("iteration", "count"), ("load", ""), ("side", ""), ("offered_per_s", "calls/s"),
                   ("achieved_per_s", "calls/s"), ("achieved_share", "rate"), ("dropped", "count"),
                   ("error_rate", "rate"), ("error_rate_with_dropped", "rate")]
PERCENTILE_NOTES = {"linear": "percentiles interpolated between the two closest ranks",
                    "nearest_rank": "percentiles at the nearest rank, ceil(q n): each a measured time"}
HOOK_COLUMNS = [("iteration", "count"), ("phase", ""), ("host", ""), ("exit_code", "count"), ("seconds", "s"),
                ("command", ""), ("output_tail", "")]


def iterations(data: ReportData) -> str:
    """Requests per iteration, side and host (then all hosts), the offered against the achieved load (an open
    model), per HTTP status, and the stage hooks run."""
    hooks = data["iteration_hooks"]
    offered = data.frames.get("report_offered", pd.DataFrame())
    return (frame_table(data["report_iteration_table"], ITERATION_COLUMNS, "host")
            + '<p class="note">marts iteration_stats (per host) and iteration_summary ((all), in bold); '
            + PERCENTILE_NOTES[data.run["percentile_method"]] + ' (run.yaml percentile_method).</p>'
            + ("" if offered.empty else "<h3>Offered against achieved load</h3>" + frame_table(offered, OFFERED_COLUMNS)
               + '<p class="note">mart iteration_summary: offered = the step\'s planned rate (or calls sent + dropped '
                 'per second), achieved = calls made per second, achieved % = calls / (calls + dropped), dropped = '
                 'calls the load tool could not start, counted as failed in error_rate_with_dropped.</p>')
            + "<h3>Per HTTP status</h3>" + frame_table(data["report_status_table"], STATUS_COLUMNS)
            + '<p class="note">mart iteration_status_stats' + _slow_note(data["report_status_table"]) + '.</p>'
            + ("" if hooks.empty else "<h3>Stage hooks</h3>" + frame_table(hooks, HOOK_COLUMNS)
               + '<p class="note">view iteration_hooks: the campaign\'s before_step / after_step commands per '
                 'iteration (exit code empty: it could not run); their whole output is in the bundle.</p>'))


def _slow_note(frame: pd.DataFrame) -> str:
    """What slow_calls counted: the calls at or over the run's slow_call_ms."""
    if frame.empty:
        return ""
    return f"; slow_calls: calls at or over {number(frame['slow_call_ms'].iloc[0], 'ms')} (thresholds.slow_call_ms)"


GAP_COLUMNS = [("iteration", "count"), ("client_calls_per_s", "calls/s"), ("server_calls_per_s", "calls/s"),
               ("client_avg_ms", "ms"), ("server_avg_ms", "ms"), ("gap_avg_ms", "ms"), ("gap_avg_pct", "%"),
               ("client_p95_ms", "ms"), ("server_p95_ms", "ms"), ("gap_p95_ms", "ms")]


def client_server(data: ReportData) -> str:
    """The load tool's response time against the service's own, per iteration."""
    frame = data["client_server_gap"]
    if frame.empty:
        return '<p class="note">Needs requests on both sides (a load-tool log and access logs) in the same iterations.</p>'
    conclusions = data["conclusions"]
    sentence = conclusions[conclusions["topic"] == "client_server"]["sentence"]
    return ("".join(f"<p>{esc(s)}</p>" for s in sentence) + frame_table(frame, GAP_COLUMNS)
            + '<p class="note">mart client_server_gap.</p>')


BACKGROUND_RATE_COLUMNS = [("host", ""), ("source_path", ""), ("iteration", "count"), ("declared_rate_per_s", "calls/s"),
                           ("calls", "count"), ("calls_per_s", "calls/s"), ("deviation_pct", "%")]
BACKGROUND_COLUMNS = [("iteration", "count"), ("host", ""), ("calls", "count"), ("errors", "count"),
                      ("error_rate", "rate"), ("calls_per_s", "calls/s"), ("avg_ms", "ms"), ("p95_ms", "ms"),
                      ("max_ms", "ms")]


def background(data: ReportData) -> str:
    """A background load on its own: did it run at its declared rate, and its own figures, never mixed in."""
    rates = data["background_rate"]
    if rates.empty:
        return '<p class="note">The run declares no background load.</p>'
    tolerance = data.run["background_rate_tolerance_pct"]
    off = rates[rates["deviation_pct"] > tolerance]
    verdict = (f"ran at its declared rate in every iteration, within {tolerance:g} %" if off.empty else
               f"was off its declared rate by more than {tolerance:g} % in iteration(s) "
               + ", ".join(str(int(i)) for i in sorted(off["iteration"].unique())))
    return (f"<p>{status_cell('pass' if off.empty else 'FAIL')} The background load {esc(verdict)}; its calls are "
            "side <code>background</code>, left out of the iterations table, the requirements and capacity.</p>"
            + frame_table(rates, BACKGROUND_RATE_COLUMNS)
            + '<p class="note">check query chk_background_load (thresholds.background_rate_tolerance_pct).</p>'
            + "<h3>Its own requests</h3>" + frame_table(data["report_background_stats"], BACKGROUND_COLUMNS)
            + '<p class="note">mart iteration_stats, side background.</p>')
