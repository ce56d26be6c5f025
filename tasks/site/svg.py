"""Trend charts as inline SVG: drawn as text in microseconds, so a site of hundreds of pages builds in seconds
(matplotlib takes a tenth of a second a figure) and needs nothing at view time."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

PALETTE = ("#1f6feb", "#d4a72c", "#2da44e", "#8250df", "#bf3989", "#0a7ea4", "#953800", "#57606a")
GREY, RED, ORANGE = "#b0b7bf", "#cf222e", "#e16f24"


@dataclass
class Line:
    """One series: its points as (x position, value, greyed); greyed points (failed, excluded runs) stay
    off the line."""

    name: str
    points: list[tuple[int, float, bool]]
    tips: list[str] = field(default_factory=list)  # a hover text per point (run and value), when given
    failed: list[bool] = field(default_factory=list)  # per point, when given: drawn red (a requirement broken)


@dataclass
class Mark:
    """A change point (a dashed line with its label), a pending one (orange) or an outlier (a red cross)."""

    x: int
    value: float
    kind: str  # change, pending, outlier
    text: str = ""


@dataclass
class Chart:
    title: str
    lines: list[Line]
    marks: list[Mark] = field(default_factory=list)
    x_labels: dict[int, str] = field(default_factory=dict)
    levels: list[tuple[float, str]] = field(default_factory=list)  # horizontal dashed lines (a threshold)
    percent: bool = False  # the values are fractions (an error rate): the y axis reads in %


LABEL_EM = 5.6  # the width of a character of a 10 px label, about (DejaVu Sans: 5.5 to 6.1 px for digits)
OFF_SCALE = 3  # a level over this many times the highest value is named, not drawn: the values would lie flat


def _scale(values: list[float], low: float, high: float):
    top = max(values, default=1.0) or 1.0
    bottom = min(0.0, min(values, default=0.0))
    span = (top - bottom) or 1.0
    return lambda v: high - (v - bottom) / span * (high - low), top


def _x_scale(count: int, left: float, right: float):
    step = (right - left) / max(count - 1, 1)
    return lambda x: left + x * step


def chart_svg(chart: Chart, count: int, width: int = 760, height: int = 220) -> str:
    """A chart of `count` runs (x positions 0..count-1): lines, grey points, marks with their text, a y axis."""
    values = [v for line in chart.lines for _, v, _ in line.points]
    high = max(values, default=0.0)
    drawn = [(v, t) for v, t in chart.levels if high <= 0 or v <= OFF_SCALE * high]
    values += [v for v, _ in drawn]
    y, top = _scale(values, 24, height - 28)
    x = _x_scale(count, 56, width - 12)
    parts = [f'<svg class="chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{escape(chart.title)}</title>',
             f'<text x="4" y="14" font-size="12" font-weight="600">{escape(chart.title)}</text>']
    for level in (0.0, top / 2, top):
        parts.append(f'<line x1="56" x2="{width - 12}" y1="{y(level):.1f}" y2="{y(level):.1f}" stroke="#eaeef2"/>'
                     f'<text x="52" y="{y(level) + 4:.1f}" font-size="10" text-anchor="end">'
                     f'{_tick(level, chart.percent)}</text>')
    for position, text in chart.x_labels.items():
        anchor = "end" if position and position == count - 1 else "start"
        parts.append(f'<text x="{x(position):.1f}" y="{height - 8}" font-size="10" text-anchor="{anchor}">'
                     f'{escape(text)}</text>')
    parts.extend(f'<text x="{width - 14}" y="{height - 20}" font-size="10" text-anchor="end" fill="{RED}">'
                 f'{escape(text)} (off the scale, above)</text>' for v, text in chart.levels if (v, text) not in drawn)
    for value, text in drawn:
        parts.append(f'<line class="level" x1="56" x2="{width - 12}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                     f'stroke="{RED}" stroke-dasharray="6,3"/><text x="{width - 14}" y="{y(value) - 4:.1f}" '
                     f'font-size="10" text-anchor="end" fill="{RED}">{escape(text)}</text>')
    labelled: set[int] = set()
    for mark in sorted(chart.marks, key=lambda m: -abs(m.value)):  # one label per run: the top mark's
        parts.append(_mark(mark if mark.x not in labelled else Mark(mark.x, mark.value, mark.kind), x, y, height,
                           width))
        labelled.add(mark.x)
    legend_x = 60
    for number, line in enumerate(chart.lines):
        color = PALETTE[number % len(PALETTE)]
        kept = [(x(p), y(v)) for p, v, grey in line.points if not grey]
        if kept:
            path = " ".join(f"{a:.1f},{b:.1f}" for a, b in kept)
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{path}"/>')
        parts.extend(_point(x(p), y(v), GREY if grey else RED if n < len(line.failed) and line.failed[n] else color,
                            line.tips[n] if n < len(line.tips) else "")
                     for n, (p, v, grey) in enumerate(line.points))
        parts.append(f'<text x="{legend_x}" y="{height - 20}" font-size="10" fill="{color}">{escape(line.name)}</text>')
        legend_x += 7 * len(line.name) + 14
    parts.append("</svg>")
    return "".join(parts)


def _point(at: float, level: float, fill: str, tip: str) -> str:
    circle = f'<circle cx="{at:.1f}" cy="{level:.1f}" r="2.2" fill="{fill}"'
    return f"{circle}><title>{escape(tip)}</title></circle>" if tip else f"{circle}/>"


def _mark(mark: Mark, x, y, height: int, width: int) -> str:
    at, level = x(mark.x), y(mark.value)
    left = at + LABEL_EM * len(mark.text) > width - 4  # a label that would pass the right edge goes left of its line
    if mark.kind == "outlier":
        return (f'<path class="outlier" d="M{at - 4:.1f},{level - 4:.1f}l8,8m0,-8l-8,8" stroke="{RED}" '
                f'stroke-width="1.5">' + (f"<title>{escape(mark.text)}</title>" if mark.text else "") + "</path>")
    color = ORANGE if mark.kind == "pending" else RED
    dash = "2,3" if mark.kind == "pending" else "4,3"
    return (f'<line class="change" x1="{at:.1f}" x2="{at:.1f}" y1="20" y2="{height - 30}" stroke="{color}" '
            f'stroke-dasharray="{dash}"/>' + (f'<text x="{at + (-3 if left else 3):.1f}" y="{max(level - 6, 30):.1f}" '
            f'font-size="10" text-anchor="{"end" if left else "start"}" fill="{color}">{escape(mark.text)}</text>'
            if mark.text else ""))


def sparkline_svg(values: list[tuple[int, float, bool]], count: int, changes: list[int],
                  width: int = 160, height: int = 32) -> str:
    """The home page's small trend: one series' kept points as a line, change points as red dots."""
    kept = [(p, v) for p, v, grey in values if not grey]
    y, _ = _scale([v for _, v in kept], 3, height - 3)
    x = _x_scale(count, 3, width - 3)
    path = " ".join(f"{x(p):.1f},{y(v):.1f}" for p, v in kept)
    dots = "".join(f'<circle cx="{x(p):.1f}" cy="{y(v):.1f}" r="2.5" fill="{RED}"/>' for p, v in kept if p in changes)
    return (f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'xmlns="http://www.w3.org/2000/svg"><polyline fill="none" stroke="{PALETTE[0]}" stroke-width="1.2" '
            f'points="{path}"/>{dots}</svg>')


def _tick(value: float, percent: bool) -> str:
    return f"{_short(value * 100)} %" if percent and value else _short(value)


def _short(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"
