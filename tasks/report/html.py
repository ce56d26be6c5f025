"""HTML building blocks of the report: one self-contained page (inline CSS, PNGs as data URIs), printable."""

from __future__ import annotations

import html
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from tasks.bundle.printable import printable
from tasks.report import units
from tasks.report.charts import Chart
from tasks.report.fmt import is_missing, number

CSS = """
:root { --ink: #1f2328; --muted: #57606a; --line: #d0d7de; --pass: #1a7f37; --fail: #cf222e; --warn: #9a6700;
        --skip: #6e7781; --band: #f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1180px; padding: 0 24px 48px; }
header { border-bottom: 2px solid var(--ink); padding: 18px 0 10px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header .meta { color: var(--muted); font-size: 13px; }
.badge { display: inline-block; padding: 1px 10px; border-radius: 10px; font-weight: 600; font-size: 15px;
         vertical-align: middle; }
.badge.pass, .badge.fail, .badge.skip { color: #fff; }
.badge.pass { background: var(--pass); } .badge.fail { background: var(--fail); } .badge.skip { background: var(--skip); }
nav { margin: 10px 0 0; font-size: 13px; } nav a { margin-right: 12px; color: #0969da; text-decoration: none; }
h2 { font-size: 18px; margin: 30px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.note, figcaption, .muted { color: var(--muted); font-size: 12px; }
ul.summary { padding-left: 20px; } ul.summary li { margin: 4px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12.5px; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
th { background: var(--band); text-align: left; font-weight: 600; }
.scroll { overflow-x: auto; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; } td.num { white-space: nowrap; }
tr.total td { font-weight: 600; background: #fbfcfd; }
.pass { color: var(--pass); font-weight: 600; } .fail { color: var(--fail); font-weight: 600; }
.warn { color: var(--warn); font-weight: 600; } .skip { color: var(--skip); }
figure { margin: 8px 0 16px; } figure img { width: 100%; max-width: 1100px; height: auto; border: 1px solid var(--line); }
details summary { cursor: pointer; color: #0969da; margin: 4px 0; }
footer { margin-top: 36px; border-top: 1px solid var(--line); padding-top: 8px; color: var(--muted); font-size: 12px; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav, details summary { display: none; }
  details { display: block; }
  h2 { break-after: avoid; }
  figure, tr { break-inside: avoid; }
  .scroll { overflow: visible; }
  table { font-size: 8pt; }
  a { color: inherit; text-decoration: none; }
  .badge { border: 1px solid #000; color: #000 !important; background: none !important; }
}
"""

STATUS_CLASS = {
    "holds": "pass", "pass": "pass", "ok": "pass", "same": "", "better": "pass", "scales": "pass",
    "broken": "fail", "FAIL": "fail", "fail": "fail", "WORSE": "fail", "worse": "fail", "saturated": "warn", "warn": "warn",
    "NEW": "fail", "not judged": "skip", "no baseline": "skip", "untested": "skip", "n/a": "skip",
    "met": "pass", "missed": "warn",  # a current expectation (verdicts.expect)
    # soak_drift verdicts
    "stable": "pass", "drifting": "fail", "inconclusive": "warn", "too short to judge": "skip",
}


@dataclass
class Column:
    """A table column: its header and whether it holds numbers (right-aligned)."""

    title: str
    numeric: bool = False


def esc(text: object) -> str:
    """Text for HTML, quotes included; control characters shown as `\\x1b` (HTML forbids them)."""
    return html.escape("" if text is None else printable(str(text), keep_lines=True), quote=True)


def _breakable(title: str) -> str:
    """A heading that may wrap after its underscores (`context_switches/s`), so a wide table fits the page."""
    return esc(title).replace("_", "_<wbr>").replace("/", "/<wbr>")


def status_cell(status: str) -> str:
    """A verdict word in its colour."""
    css = STATUS_CLASS.get(status, "")
    return f'<span class="{css}">{esc(status)}</span>' if css else esc(status)


def table(columns: Sequence[Column], rows: Iterable[Sequence[str]], raw: set[int] | None = None,
          row_classes: Sequence[str] | None = None) -> str:
    """A table of already formatted cells; cells whose index is in `raw` are trusted HTML (status cells)."""
    raw = raw or set()
    head = "".join(f'<th class="num">{_breakable(c.title)}</th>' if c.numeric else f"<th>{_breakable(c.title)}</th>"
                   for c in columns)
    body = []
    for number, row in enumerate(rows):
        css = f' class="{row_classes[number]}"' if row_classes and row_classes[number] else ""
        cells = "".join(
            f'<td{" class=num" if columns[i].numeric else ""}>{cell if i in raw else esc(cell)}</td>'
            for i, cell in enumerate(row)
        )
        body.append(f"<tr{css}>{cells}</tr>")
    if not body:
        return '<p class="note">No rows.</p>'
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def cell(value, unit: str) -> str:
    """A table cell under a heading that names the unit: the number alone (text and times as they are)."""
    return "" if is_missing(value) else units.plain(value, unit) if unit in units.UNITS and isinstance(
        value, numbers.Real) and not isinstance(value, bool) else number(value)


def frame_table(frame: pd.DataFrame, spec: list[tuple[str, str]], total_column: str | None = None) -> str:
    """A DataFrame as a table, each column's unit in its heading (units.py); rows whose `total_column` is '(all)' in bold."""
    columns = [Column(units.heading(name, unit), unit not in ("",)) for name, unit in spec]
    rows = [[cell(record[name], unit) for name, unit in spec] for record in frame.to_dict("records")]
    classes = ["total" if total_column and record[total_column] == "(all)" else "" for record in frame.to_dict("records")]
    return table(columns, rows, row_classes=classes)


def figure(chart: Chart) -> str:
    """A chart as an embedded PNG with its caption."""
    return (f'<figure id="fig-{esc(chart.key)}"><img alt="{esc(chart.title)}" src="data:image/png;base64,'
            f'{chart.png_base64}"><figcaption>{esc(chart.title)}: {esc(chart.caption)}</figcaption></figure>')


def section(anchor: str, title: str, body: str) -> str:
    """A titled section of the page."""
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{body}</section>'


def details(summary: str, body: str) -> str:
    """A collapsed block (opened when printing)."""
    return f"<details><summary>{esc(summary)}</summary>{body}</details>"


def page(title: str, header: str, sections: list[tuple[str, str, str]], footer: str) -> str:
    """The whole document: header, a table of contents, the sections (anchor, title, body), the footer."""
    nav = "".join(f'<a href="#{esc(anchor)}">{esc(name)}</a>' for anchor, name, _ in sections)
    body = "".join(section(anchor, name, content) for anchor, name, content in sections)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, '
        f'initial-scale=1"><title>{esc(title)}</title><style>{CSS}</style></head><body>'
        f"<header>{header}<nav>{nav}</nav></header><main>{body}</main><footer>{footer}</footer></body></html>\n"
    )
