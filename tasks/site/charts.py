"""The site's charts from the key series points (sql/reports/site_series.sql): the campaign page's trends and
the home page's sparkline."""

from __future__ import annotations

from html import escape
from typing import Any

from tasks.report.fmt import metric_unit, number
from tasks.site.svg import Chart, Line, Mark, chart_svg, sparkline_svg

METRICS = {"p95_ms": "p95 (ms)", "calls_per_s": "throughput (calls/s)", "error_rate": "error rate"}
OPEN = ("new", "pending", "mixed")


def positions(points: list[dict[str, Any]]) -> dict[str, int]:
    """Each run's x position: its rank by start among the shown runs."""
    runs = sorted({(p["run_started_at"], p["run_id"]) for p in points})
    return {run_id: i for i, (_, run_id) in enumerate(runs)}


def _greyed(point: dict[str, Any]) -> bool:
    return bool(point["is_excluded"]) or point["run_status"] in ("failed", "cancelled")


def _mark_text(point: dict[str, Any]) -> str:
    pct = number(point["change_pct"], "pct") if point["change_pct"] is not None else "from 0"
    return f"{pct} {point['label_changes']}" if point["label_changes"] else pct


def trend_charts(points: list[dict[str, Any]]) -> list[str]:
    """One SVG per key metric: a line per (plan, side, iteration), a new plan being a new line, each point's run and
    value on hover (an error rate in %); change points dashed with their % and the labels that changed, pending ones
    orange, outliers as crosses."""
    at = positions(points)
    out = []
    for metric, title in METRICS.items():
        lines: dict[tuple, Line] = {}
        marks = []
        for p in (p for p in points if p["metric"] == metric):
            key = (p["plan_id"], p["side"], p["iteration"])
            line = lines.setdefault(key, Line(f"{p['side']} it {p['iteration']}", []))
            line.points.append((at[p["run_id"]], p["value"], _greyed(p)))
            line.tips.append(_tip(p, p["value"], metric=metric))
            if p["kind"] == "outlier":
                marks.append(Mark(at[p["run_id"]], p["value"], "outlier", _mark_text(p)))
            elif p["kind"] == "change":
                marks.append(Mark(at[p["run_id"]], p["value"], "pending" if p["status"] == "pending" else "change",
                                  _mark_text(p)))
        if lines:
            out.append(chart_svg(Chart(title, list(lines.values()), marks, _ends(at), percent=is_rate(metric)), len(at)))
    return out


def key_series(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The home page's series: server p95 (client when no server) of the highest iteration of the last run's plan."""
    p95 = [p for p in points if p["metric"] == "p95_ms"]
    if not p95:
        return []
    plan = max(p95, key=lambda p: (p["run_started_at"], p["run_id"]))["plan_id"]
    side = "server" if any(p["side"] == "server" and p["plan_id"] == plan for p in p95) else "client"
    mine = [p for p in p95 if p["plan_id"] == plan and p["side"] == side]
    top = max(p["iteration"] for p in mine)
    return [p for p in mine if p["iteration"] == top]


def sparkline(points: list[dict[str, Any]]) -> tuple[str, str]:
    """The home page's small trend and what it shows; empty when the campaign has no series yet."""
    series = key_series(points)
    if not series:
        return "", ""
    at = positions(points)
    values = [(at[p["run_id"]], p["value"], _greyed(p)) for p in series]
    changes = [at[p["run_id"]] for p in series if p["kind"] == "change"]
    what = f"{series[0]['side']} p95 (ms), iteration {series[0]['iteration']}, last {len(at)} runs"
    return sparkline_svg(values, len(at), changes), what


def is_rate(metric: str) -> bool:
    """A fraction (an error rate), shown in %."""
    return metric_unit(metric) == "rate"


def figure(value: float, metric: str = "") -> str:
    """A value as the site shows it: an error rate (a fraction) in %, anything else as it is."""
    return number(value, "rate") if is_rate(metric) else number(value)


def _tip(row: dict[str, Any], value: float, what: str = "", metric: str = "") -> str:
    return f"{row['run_id']}: {figure(value, metric)}{' ' + what if what else ''}"


def _ends(at: dict[str, int]) -> dict[int, str]:
    return {i: run_id for run_id, i in at.items() if i in (0, len(at) - 1)}


def _iterations(found: list[int]) -> str:
    """'1-3' for three or more consecutive iterations, else '1, 3'."""
    if len(found) > 2 and found == list(range(found[0], found[-1] + 1)):
        return f"{found[0]}-{found[-1]}"
    return ", ".join(str(i) for i in found)


def _moved_text(moved: dict[str, Any]) -> str:
    """One kind of the history's changes at a run: '+18.2 % to +22.2 %, it 1-3' ('pending ...' when pending)."""
    low, high = (number(moved[end], "pct") if moved[end] is not None else None for end in ("low_pct", "high_pct"))
    pct = "from 0" if low is None else low if low == high else f"{low} to {high}"
    return f"{'pending ' if moved['kind'] == 'pending' else ''}{pct}, it {_iterations(moved['iterations'])}"


def _run_marks(changes: list[tuple[str, dict[str, Any]]], x: int, value: float) -> list[Mark]:
    """The history's changes at a run ((name or '', `changes` entry) of a requirement's or capacity's rows): a mark
    per entry, the first carrying every entry's text and the labels that changed (a run gets one label)."""
    found = sorted(changes, key=lambda c: c[1]["kind"] == "outlier")
    labels = dict.fromkeys(m["label_changes"] for _, m in found if m["label_changes"])
    text = " ".join(["; ".join(f"{name + ': ' if name else ''}{_moved_text(m)}" for name, m in found), *labels])
    return [Mark(x, value, m["kind"], text if n == 0 else "") for n, (_, m) in enumerate(found)]


def requirement_charts(rows: list[dict[str, Any]], at: dict[str, int]) -> list[str]:
    """One SVG per requirement of the last run (sql/reports/site_requirement_series.sql): the figure it judged in
    each run (its whole-run line), the broken ones red, the last run's threshold as a dashed line, and the
    history's change points and outliers on the series of its side, metric and scope (or why there are none, under
    the chart); `at`: the runs' x positions, the same on every chart of the page."""
    out = []
    for requirement in dict.fromkeys(r["requirement_id"] for r in rows):
        mine = [r for r in rows if r["requirement_id"] == requirement]
        last = mine[-1]
        line = Line(f"{last['side']} {last['metric']}", [(at[r["run_id"]], r["measured"], _greyed(r)) for r in mine],
                    tips=[_tip(r, r["measured"], "held" if r["passed"] else "BROKEN", r["metric"]) for r in mine],
                    failed=[not r["passed"] for r in mine])
        title = f"{requirement}: {last['rule']}, {last['judged_by']}"
        level = (last["last_threshold"], f"threshold {last['op']} {figure(last['last_threshold'], last['metric'])}")
        marks = [m for r in mine for m in _run_marks([("", c) for c in r["changes"] or []], at[r["run_id"]], r["measured"])]
        svg = chart_svg(Chart(title, [line], marks, x_labels=_ends(at), levels=[level], percent=is_rate(last["metric"])),
                        len(at))
        note = f'<p class="grey">{escape(last["history_note"])}</p>' if last["history_note"] else ""
        out.append(svg + note)
    return out


def capacity_charts(rows: list[dict[str, Any]], at: dict[str, int]) -> list[str]:
    """The runs' capacity (sql/reports/site_capacity_series.sql), a line per side and series: the highest
    throughput measured, with the history's change points of its series (calls_per_s of the side at that
    iteration), and the knee's load level in the runs where one was found (none: no chart); `at` as
    requirement_charts'."""
    highest: dict[tuple, Line] = {}
    knees: dict[tuple, Line] = {}
    moved: dict[str, list[tuple[str, dict[str, Any]]]] = {}  # run: its changes on every line
    top: dict[str, float] = {}
    for r in rows:
        key, name = (r["side"], r["series"]), f"{r['side']} {r['series']}".strip()
        line = highest.setdefault(key, Line(name, []))
        line.points.append((at[r["run_id"]], r["max_calls_per_s"], _greyed(r)))
        line.tips.append(_tip(r, r["max_calls_per_s"], f"calls/s, iteration {r['max_iteration']}"))
        moved.setdefault(r["run_id"], []).extend((name, c) for c in r["changes"] or [])
        top[r["run_id"]] = max(top.get(r["run_id"], 0.0), r["max_calls_per_s"])  # the label's height
        if r["knee_load_level"] is not None:
            knee = knees.setdefault(key, Line(name, []))
            knee.points.append((at[r["run_id"]], r["knee_load_level"], _greyed(r)))
            knee.tips.append(_tip(r, r["knee_load_level"], f"({r['knee_load']}, iteration {r['knee_iteration']}, "
                                                           f"{number(r['knee_calls_per_s'])} calls/s)"))
    marks = [m for run, found in moved.items() for m in _run_marks(found, at[run], top[run])]
    charts = [(highest, "capacity: highest throughput (calls/s)", marks), (knees, "capacity: the knee's load level", [])]
    return [chart_svg(Chart(title, list(lines.values()), found, x_labels=_ends(at)), len(at))
            for lines, title, found in charts if lines]
