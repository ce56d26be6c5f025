"""The site's pages as HTML text: home, campaign (with its runs paged) and event. Every text from the warehouse
(hence from bundles) goes through `esc`; links come from tasks/site/links.py only."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from tasks.bundle.manifest import web_url
from tasks.report.fmt import number
from tasks.site import links
from tasks.site.charts import OPEN, capacity_charts, figure, positions, requirement_charts, sparkline, trend_charts
from tasks.site.data import TREND_RUNS, CampaignData

RUNS_PER_PAGE = 100
AROUND = 3  # runs shown each side of an event's run
CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#1f2328}
table{border-collapse:collapse;margin:8px 0}th,td{border-bottom:1px solid #d0d7de;padding:4px 8px;text-align:left;
vertical-align:middle;white-space:nowrap}.wrap{white-space:normal;display:inline-block;max-width:28em}th{background:#f6f8fa}
.bad{color:#cf222e;font-weight:600}.ok{color:#1a7f37}.grey{color:#8c959f}.pending{color:#e16f24}
code{background:#f6f8fa;padding:2px 4px}nav a{margin-right:12px}svg{display:block}"""
GOOD, BAD = ("pass",), ("FAIL", "RUN FAILED", "RUN CANCELLED", "DATA FAILED")


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def layout(title: str, page: str, body: str) -> str:
    """A whole page: no script, no outside resource; a link home on every page but the home page."""
    nav = "" if page == "index.html" else f'<nav><a href="{links.href("index.html", page)}">all campaigns</a></nav>'
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<meta name="viewport" content="width=device-width"><style>{CSS}</style></head><body>{nav}'
            f'<h1>{esc(title)}</h1>{body}</body></html>\n')


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], css: str = "") -> str:
    """Cells are HTML already (escaped by the caller)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(f'<td>{c}</td>' for c in row)}</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def verdict_cell(verdict: str) -> str:
    css = "ok" if verdict in GOOD else "bad" if verdict in BAD else "grey"
    return f'<span class="{css}">{esc(verdict)}</span>'


def link(url: str | None, text: str) -> str:
    return f'<a href="{esc(url)}">{esc(text)}</a>' if url else ""


def _outside(row: dict[str, Any], site_root: str, page: str) -> str:
    """The links of a run's row: its report, its bundle's run.yaml and its Prefect flow run (an http(s) page only)."""
    report = links.outside_href(row.get("report_uri"), site_root, page)
    bundle_uri = row.get("bundle_uri")
    bundle = links.outside_href(f"{bundle_uri.rstrip('/')}/run.yaml", site_root, page) if bundle_uri else None
    flow_run = web_url(row.get("flow_run_url"))
    return " ".join(filter(None, (link(report, "report"), link(bundle, "bundle"), link(flow_run, "flow run"))))


def home(campaigns: list[CampaignData], site_root: str) -> str:
    """One row per campaign: last run, verdict, requirements, open regressions, trend, links."""
    page, rows = "index.html", []
    for data in campaigns:
        h = data.home
        spark, what = sparkline(data.points)
        regressions = (f'<span class="bad">{h["open_regressions"]} ({esc(number(h["worst_change_pct"], "pct"))})'
                       f'</span>' if h["open_regressions"] else '<span class="ok">0</span>')
        rows.append([
            link(links.href(links.campaign_page(h["campaign"]), page), h["campaign"]),
            esc(number(h["started_at"])), esc(h["run_id"]), f'<span class="wrap">{esc(h["labels"])}</span>',
            esc(h["status"]), verdict_cell(h["verdict"]),
            f'{h["requirements_held"]} / <span class="{"bad" if h["requirements_failed"] else ""}">'
            f'{h["requirements_failed"]}</span>',
            regressions, f'<span title="{esc(what)}">{spark}</span>', _outside(h, site_root, page),
        ])
    headers = ["campaign", "last run (UTC)", "run", "labels", "status", "verdict", "requirements held / failed",
               "open regressions (worst)", f"trend (last {TREND_RUNS} runs)", "links"]
    body = table(headers, rows, "campaigns") if rows else "<p>No runs in the warehouse yet.</p>"
    return layout("Performance campaigns", page, body)


def campaign(data: CampaignData, site_root: str) -> dict[str, str]:
    """The campaign page (charts, events, the newest runs) and its further runs pages: {page path: html}."""
    name = data.home["campaign"]
    page = links.campaign_page(name)
    charts = "".join(trend_charts(data.points)) or "<p>No history series yet.</p>"
    note = ('<p class="grey">grey points: failed or excluded runs (in no series); dashed red: change points with '
            'their % and the labels that changed; dashed orange: pending; red cross: outlier.</p>')
    at = positions(data.points + data.requirements + data.capacity)  # the new charts' runs line up
    judged = "".join(requirement_charts(data.requirements, at))
    judged += ('<p class="grey">each requirement of the last run: the figure it judged in each run that judged it '
               '(the worst judged value), red where it was broken, grey in failed or excluded runs; dashed red: '
               'the last run\'s threshold (named only when far above the values); dashed red: the history\'s '
               'change points on the series of the requirement\'s side, metric and scope at the iterations it '
               'judged (their %, iterations and the labels that changed), dashed orange: pending; red cross: '
               'outlier.</p>' if judged else "<p>The last run states no requirement.</p>")
    capacity = "".join(capacity_charts(data.capacity, at)) or "<p>No capacity figures yet.</p>"
    if data.capacity and not any(r["knee_load_level"] is not None for r in data.capacity):
        capacity += "<p>No knee found in these runs (each report's capacity section says why).</p>"
    oldest_first = data.runs[::-1]
    chunks = -(-len(oldest_first) // RUNS_PER_PAGE) if len(oldest_first) > RUNS_PER_PAGE else 0
    out = {}
    for chunk in range(1, chunks + 1):
        path = links.runs_page(name, chunk)
        shown = oldest_first[(chunk - 1) * RUNS_PER_PAGE:chunk * RUNS_PER_PAGE][::-1]
        body = f"<h2>Runs {esc(shown[-1]['run_id'])} to {esc(shown[0]['run_id'])}</h2>{_pager(name, chunks, path, chunk)}"
        out[path] = layout(f"Campaign {name}: runs", path, body + _runs_table(shown, site_root, path))
    newest = data.runs[:RUNS_PER_PAGE]
    runs = (f"<h2>Runs (newest first, {len(newest)} of {len(data.runs)})</h2>{_pager(name, chunks, page)}"
            f"{_runs_table(newest, site_root, page)}")
    out[page] = layout(f"Campaign {name}", page,
                       f"<h2>Trends</h2>{charts}{note}<h2>Requirements</h2>{judged}<h2>Capacity</h2>{capacity}"
                       f"<h2>Events</h2>{_events_table(data, page)}{runs}")
    return out


def _pager(name: str, chunks: int, page: str, chunk: int | None = None) -> str:
    """The newest page links every chunk; a chunk links the newest, the next newer and the next older only,
    so a new chunk changes one older page, not all."""
    if not chunks:
        return ""
    shown = range(chunks, 0, -1) if chunk is None else [n for n in (chunk + 1, chunk - 1) if 1 <= n <= chunks]
    items = [link(links.href(links.campaign_page(name), page), "newest")]
    items += [link(links.href(links.runs_page(name, n), page), f"{n}{' (oldest)' if n == 1 else ''}") for n in shown]
    return f"<p>runs, {RUNS_PER_PAGE} a page: {' '.join(items)}</p>"


def _events_table(data: CampaignData, page: str) -> str:
    if not data.events:
        return "<p>No change points found.</p>"
    rows = []
    for e in data.events:
        is_open = e["kind"] == "change" and e["direction"] == "regression" and e["status"] in OPEN
        css = "bad" if is_open else "pending" if e["status"] == "pending" else ""
        rows.append([
            link(links.href(links.event_page(data.home["campaign"], e["event_id"]), page), e["event_id"]),
            esc(e["run_id"]), esc(number(e["run_started_at"])), esc(e["kind"]),
            f'<span class="{css}">{esc(e["direction"])}</span>', esc(number(e["change_pct"], "pct")),
            esc(e["series"]), f'<span class="wrap">{esc(e["metrics"])}</span>',
            f'<span class="{css}">{esc(e["status"])}</span>',
            f'<span class="wrap">{esc(e["triage_note"])}</span>', esc(e["label_changes"]),
        ])
    return table(["event", "run", "started (UTC)", "kind", "direction", "change (median)", "series", "metrics",
                  "status", "note", "labels that changed"], rows)


def _runs_table(runs: list[dict[str, Any]], site_root: str, page: str) -> str:
    rows = []
    for r in runs:
        status = esc(r["status"]) + (f' <span class="grey">({esc(r["status_reason"])})</span>' if r["status_reason"] else "")
        rows.append([esc(r["run_id"]), esc(number(r["started_at"])), esc(r["labels"]), status,
                     verdict_cell(r["verdict"]), f'<span class="grey">{esc(r["excluded_because"])}</span>',
                     _outside(r, site_root, page)])
    return table(["run", "started (UTC)", "labels", "status", "verdict", "out of the history", "links"], rows)


INTERVAL_NOTE = ("before and after: segment medians. 95 % interval: of the segment's median, distribution-free, "
                 "from order statistics (x(k) to x(n+1-k) of its n runs sorted, k the largest rank with "
                 "P(Binomial(n, 1/2) &lt; k) &le; 2.5 %); a segment runs between the series' change points, "
                 "outliers left out; under 6 runs there is none.")


def _interval(s: dict[str, Any], side: str) -> str:
    """A segment's 95 % interval of its median and its runs (sql/reports/site_event_series.sql)."""
    runs = s[f"{side}_runs"]
    if runs is None:
        return ""
    if s[f"{side}_low"] is None:
        return f'<span class="grey">({runs} runs: too few)</span>'
    low, high = (esc(figure(s[f"{side}_{end}"], s["metric"])) for end in ("low", "high"))
    return f'{low} – {high} <span class="grey">({runs} runs)</span>'


def _triage_history(decisions: list[dict[str, Any]]) -> str:
    """Every triage of the event, newest first (the first is its status): when, what, the note, how many of its
    change points it set."""
    if not decisions:
        return '<p class="grey">Not triaged yet.</p>'
    rows = [[esc(number(d["triaged_at"])), esc(d["status"]), f'<span class="wrap">{esc(d["note"])}</span>',
             esc(d["change_points"])] for d in decisions]
    return "<h3>Triage history (newest first)</h3>" + table(["triaged (UTC)", "status", "note", "change points"],
                                                             rows, "triage")


def event(data: CampaignData, e: dict[str, Any], site_root: str) -> tuple[str, str]:
    """An event's page: the series it moved (before / after), the runs around it, the triage command."""
    name = data.home["campaign"]
    page = links.event_page(name, e["event_id"])
    series = [[esc(s["side"]), esc(s["host"]), esc(s["iteration"]), esc(s["label"]), esc(s["metric"]),
               esc(figure(s["before_value"], s["metric"])), _interval(s, "before"),
               esc(figure(s["after_value"], s["metric"])),
               _interval(s, "after"), esc(number(s["change_pct"], "pct")),
               esc(number(s["p_value"], "p")), esc(s["status"]), f'<span class="wrap">{esc(s["triage_note"])}</span>']
              for s in data.event_series.get(e["event_id"], [])]
    order = [r["run_id"] for r in data.runs]
    at = order.index(e["run_id"]) if e["run_id"] in order else 0
    around = data.runs[max(0, at - AROUND):at + AROUND + 1]
    facts = table(["campaign", "scenario", "run", "previous run", "kind", "direction", "change (median)",
                   "largest", "status", "first found by", "labels that changed"],
                  [[esc(name), esc(e["scenario"]), esc(e["run_id"]), esc(e["previous_run_id"]), esc(e["kind"]),
                    esc(e["direction"]), esc(number(e["change_pct"], "pct")),
                    esc(number(e["largest_change_pct"], "pct")), esc(e["status"]), esc(e["first_detected_in"]),
                    esc(e["label_changes"])]])
    command = f"perfcampaign triage {shlex.quote(e['event_id'])} --acknowledge --note 'WHY'"
    body = (f"{facts}<h2>Triage</h2><p>status {esc(e['status'])}"
            f"{', note: ' + esc(e['triage_note']) if e['triage_note'] else ''}"
            f"{', triaged ' + esc(number(e['triaged_at'])) if e['triaged_at'] else ''}.</p>"
            + _triage_history(data.event_triage.get(e["event_id"], [])) +
            f"<p>Acknowledge it (or <code>--expected</code>, <code>--invalid</code>):</p>"
            f'<pre><code class="triage">{esc(command)}</code></pre>'
            f"<h2>Series it moved ({len(series)})</h2><p class=\"grey\">{INTERVAL_NOTE}</p>"
            + table(["side", "host", "iteration", "label", "metric", "before", "before 95 % interval", "after",
                     "after 95 % interval", "change", "p-value", "status", "note"], series)
            + f"<h2>Runs around it</h2>{_runs_table(around, site_root, page)}")
    return page, layout(f"Event {e['event_id']} of {name}", page, body)
