"""The report's charts with matplotlib (Agg), as base64 PNG: they plot warehouse rows as they are."""

from __future__ import annotations

import base64
import io
import json
import math
from dataclasses import dataclass

import pandas as pd

from tasks.bundle.load import load_level_key
from tasks.report.data import ReportData

SIDE_STYLE = {"server": "-", "client": "--"}
MiB = 1024 * 1024


@dataclass
class Chart:
    """One figure of the report: an anchor, a title, a caption and the PNG as base64."""

    key: str
    title: str
    caption: str
    png_base64: str


def import_matplotlib() -> None:
    """Import matplotlib's pyplot (Agg) now: ~0.6 s of a report's first chart otherwise."""
    _pyplot()


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _naive_utc(values: pd.Series) -> pd.Series:
    values = pd.to_datetime(values, utc=True)
    return values.dt.tz_convert("UTC").dt.tz_localize(None)


DPI = 100
PAD_IN = 0.1  # around what a figure draws, as savefig's bbox_inches="tight" pads it


def _encode(fig) -> str:
    """The figure as a base64 PNG cropped to what it draws. savefig(bbox_inches="tight") draws a figure twice
    (a dry draw to find what sticks out, then the image), half of a report's time; drawn once and cropped
    is the same image when everything lies on the canvas (`_figure` leaves room for the legends), else
    matplotlib's tight save makes it."""
    plt = _pyplot()
    try:
        png = _drawn_once(fig)
        if png is None:
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight", pad_inches=PAD_IN)
            png = buffer.getvalue()
    finally:
        plt.close(fig)
    return base64.b64encode(png).decode("ascii")


def _drawn_once(fig) -> bytes | None:
    """The PNG of one draw on the Agg canvas, cropped to the figure's tight box; None when that box leaves the canvas."""
    import numpy as np
    from PIL import Image

    fig.set_dpi(DPI)
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches, from the bottom left
    width, height = fig.get_size_inches()
    if box.x0 < 0 or box.y0 < 0 or box.x1 > width or box.y1 > height:
        return None
    box = box.padded(PAD_IN)  # a margin past the canvas's edge (a constrained layout fills it) is left out
    pixels = np.asarray(fig.canvas.buffer_rgba())  # rows from the top
    rows, columns = pixels.shape[:2]
    top, bottom = max(rows - math.ceil(box.y1 * DPI), 0), min(rows - math.floor(box.y0 * DPI), rows)
    left, right = max(math.floor(box.x0 * DPI), 0), min(math.ceil(box.x1 * DPI), columns)
    buffer = io.BytesIO()
    Image.fromarray(pixels[top:bottom, left:right]).save(buffer, format="png")
    return buffer.getvalue()


def _mark_iterations(axes, iterations: pd.DataFrame) -> None:
    """Iterations as vertical lines: solid at the start, dashed at the end, the number on top."""
    starts, ends = _naive_utc(iterations["started_at"]), _naive_utc(iterations["ended_at"])
    for ax in axes:
        for start, end in zip(starts, ends):
            ax.axvspan(start, end, color="#4c72b0", alpha=0.06, lw=0)
            ax.axvline(start, color="#2a6f2a", lw=1.0)
            ax.axvline(end, color="#8c2d2d", lw=1.0, ls="--")
    for number, start in zip(iterations["iteration"], starts):  # above the frame, clear of lines and legends
        axes[0].annotate(f"it {number}", (start, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 3),
                         textcoords="offset points", fontsize=8, color="#2a6f2a", ha="center", va="bottom")


def _legend(ax) -> None:
    """The legend right of the plot, where it hides nothing."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def _time_axis(ax) -> None:
    import matplotlib.dates as mdates

    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S"))
    ax.set_xlabel("time (UTC)")


# Room around a chart's 9-inch figure, cropped away where unused: right for the legends beside the axes,
# below for the time axis' labels of a short figure, above for the iterations' numbers.
ROOM_RIGHT_IN, ROOM_BELOW_IN, ROOM_ABOVE_IN = 3.0, 0.6, 0.3


def _figure(rows: int, height: float = 2.6):
    """Charts stacked on one time axis, their axes where matplotlib puts them on a 9-inch figure, on a canvas
    with room around it for what is drawn outside them (so `_encode` draws it once)."""
    plt = _pyplot()
    drawn = height * rows
    width, tall = 9 + ROOM_RIGHT_IN, drawn + ROOM_BELOW_IN + ROOM_ABOVE_IN
    fig, axes = plt.subplots(rows, 1, figsize=(width, tall), sharex=True, squeeze=False)
    fig.subplots_adjust(left=1.125 / width, right=8.1 / width,  # matplotlib's defaults on 9 x `drawn` inches
                        bottom=(0.11 * drawn + ROOM_BELOW_IN) / tall, top=(0.88 * drawn + ROOM_BELOW_IN) / tall)
    for ax in axes[:, 0]:
        ax.grid(True, color="#dddddd", lw=0.6)
    return fig, list(axes[:, 0])


def minute_chart(data: ReportData) -> Chart | None:
    """Response time and calls per minute for each side and host, iterations marked."""
    minutes = data["report_minutes"]
    if minutes.empty:
        return None
    fig, (rt, calls) = _figure(2)
    for (side, host), group in minutes.groupby(["side", "host"], sort=True):
        # a minute's figures hold for the whole minute: steps from its start to the next minute
        at = list(_naive_utc(group["minute_at"])) + [_naive_utc(group["minute_at"]).iloc[-1] + pd.Timedelta(minutes=1)]

        def steps(column: str) -> list:
            return list(group[column]) + [group[column].iloc[-1]]

        style = SIDE_STYLE.get(side, "-")
        line = rt.plot(at, steps("avg_ms"), style, drawstyle="steps-post", label=f"{side} {host} avg")[0]
        rt.plot(at, steps("p95_ms"), ":", drawstyle="steps-post", color=line.get_color(), label=f"{side} {host} p95")
        calls.plot(at, steps("calls"), style, drawstyle="steps-post", color=line.get_color(), label=f"{side} {host}")
    rt.set_ylabel("response time (ms)")
    calls.set_ylabel("calls per minute")
    rt.set_ylim(bottom=0)
    calls.set_ylim(bottom=0)
    _legend(rt)
    _legend(calls)
    _mark_iterations([rt, calls], data["report_iterations"])
    _time_axis(calls)
    return Chart("minutes", "Response time and calls per minute",
                 "mart minute_stats, each minute's figures drawn across the minute; iterations start at the solid "
                 "lines and end at the dashed ones", _encode(fig))


def _capacity_points(data: ReportData) -> pd.DataFrame:
    rows = []
    for record in data["capacity"].to_dict("records"):
        for point in record["points"]:
            rows.append({"side": record["side"], **point})
    return pd.DataFrame(rows)


def load_axis_name(data: ReportData) -> str:
    """What the load level is read from in this run (`vus`, `nodes x threads`, `rate_per_s` ...), for the axis."""
    key = data.run.get("capacity_load_key")
    names = {load_level_key(json.loads(text), key) for text in data["report_iterations"]["load_json"] if text}
    names.discard(None)
    return "load level: " + (" / ".join(sorted(names)) if names else "none")


SIDE_COLOUR = {"client": "#1f77b4", "server": "#d62728"}
PANELS_PER_ROW = 3


def load_chart(data: ReportData) -> Chart | None:
    """The chart of `load_figure`, as a PNG."""
    drawn = load_figure(data)
    return None if drawn is None else Chart("load", "Throughput and response time against load", drawn[1],
                                            _encode(drawn[0]))


def load_figure(data: ReportData):
    """(figure, caption): throughput and response time against the load level: one small panel pair per series (throughput above,
    response time below), the sides as lines in each, a knee as a cross named in the panel's title, so no
    label sits on another; with one series and several labels, the p95 of each label instead."""
    points = _capacity_points(data)
    if points.empty or points["load_level"].isna().all():
        return None
    summary = data["report_iteration_table"]
    summary = summary[summary["host"] == "(all)"][["iteration", "side", "avg_ms", "p95_ms"]]
    points = points.merge(summary, on=["iteration", "side"], how="left").dropna(subset=["load_level"])
    labels = data["report_label_stats"]
    series = list(points["series"].unique())  # capacity's order: by value (MART_ORDER)
    per_label = len(series) == 1 and labels.groupby("side")["label"].nunique().max() > 1
    columns = min(PANELS_PER_ROW, len(series))
    rows = -(-len(series) // columns)
    plt = _pyplot()
    fig, axes = plt.subplots(2 * rows, columns, figsize=(9 if columns == 1 else 11, (2.6 if columns == 1 else 2.1) * 2 * rows),
                             sharex=True, squeeze=False, layout="constrained")  # room for every label, none on another
    knees = {(r["side"], r["series"]): r for r in data["capacity"].to_dict("records")
             if not pd.isna(r["saturated"]) and bool(r["saturated"]) and not pd.isna(r["knee_load_level"])}
    for number, name in enumerate(series):
        tput, rt = axes[2 * (number // columns), number % columns], axes[2 * (number // columns) + 1, number % columns]
        knee_words = []
        for side, group in points[points["series"] == name].groupby("side", sort=True):
            colour, style = SIDE_COLOUR.get(side, "#555555"), SIDE_STYLE.get(side, "-")
            tput.plot(group["load_level"], group["calls_per_s"], style, marker="o", ms=4, color=colour,
                      label=f"{side} calls/s")
            if not per_label:
                rt.plot(group["load_level"], group["avg_ms"], style, marker="o", ms=4, color=colour, label=f"{side} avg")
                rt.plot(group["load_level"], group["p95_ms"], ":", marker="^", ms=4, color=colour, label=f"{side} p95")
            if (side, name) in knees:
                knee = knees[(side, name)]
                tput.plot([knee["knee_load_level"]], [knee["knee_calls_per_s"]], "x", color="black", ms=9, mew=2)
                knee_words.append(f"{side} it {int(knee['knee_iteration'])}")
        tput.set_title((name or "all steps") + (f"\nknee: {', '.join(knee_words)}" if knee_words else "\nno knee"),
                       fontsize=9)
    if per_label:
        levels = points.drop_duplicates("iteration")[["iteration", "load_level"]]
        for (side, label), group in labels.merge(levels, on="iteration").groupby(["side", "label"], sort=True):
            axes[1, 0].plot(group["load_level"], group["p95_ms"], SIDE_STYLE.get(side, "-"), marker="o", ms=4,
                            label=f"{side} {label} p95")
    axis_name = load_axis_name(data)
    for row in range(rows):
        for column in range(columns):
            tput, rt = axes[2 * row, column], axes[2 * row + 1, column]
            if row * columns + column >= len(series):
                tput.set_visible(False)
                rt.set_visible(False)
                continue
            for ax in (tput, rt):
                ax.grid(True, color="#dddddd", lw=0.6)
                ax.set_ylim(bottom=0)
                ax.tick_params(labelsize=8)
            if column == 0:
                tput.set_ylabel("calls/s", fontsize=8)
                rt.set_ylabel("ms", fontsize=8)
            if row == rows - 1 or (row + 1) * columns + column >= len(series):
                rt.set_xlabel(axis_name, fontsize=8)
                rt.xaxis.set_tick_params(labelbottom=True)
    if columns == 1:
        _legend(axes[0, 0])
        _legend(axes[1, 0])
    else:  # one legend for every panel, under them
        handles, names = axes[0, 0].get_legend_handles_labels()
        more, more_names = axes[1, 0].get_legend_handles_labels()
        fig.legend(handles + more, names + more_names, loc="outside lower center", ncol=6, fontsize=8, frameon=False)
    return fig, (f"marts capacity and iteration_summary, {axis_name}; one panel pair per series (calls/s above, "
                 "response time below), a black cross at each side's knee"
                 + (", and p95 per label from requests" if per_label else ""))

