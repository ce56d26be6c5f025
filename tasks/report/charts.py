"""The report's charts with matplotlib (Agg), as base64 PNG: they plot warehouse rows as they are."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import pandas as pd

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


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _naive_utc(values: pd.Series) -> pd.Series:
    values = pd.to_datetime(values, utc=True)
    return values.dt.tz_convert("UTC").dt.tz_localize(None)


def _encode(fig) -> str:
    plt = _pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


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


def _figure(rows: int, height: float = 2.6):
    plt = _pyplot()
    fig, axes = plt.subplots(rows, 1, figsize=(9, height * rows), sharex=True, squeeze=False)
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


def load_chart(data: ReportData) -> Chart | None:
    """Throughput and response time against the load level, one line per side and series (or label)."""
    points = _capacity_points(data)
    if points.empty or points["load_level"].isna().all():
        return None
    summary = data["report_iteration_table"]
    summary = summary[summary["host"] == "(all)"][["iteration", "side", "avg_ms", "p95_ms"]]
    points = points.merge(summary, on=["iteration", "side"], how="left").dropna(subset=["load_level"])
    labels = data["report_label_stats"]
    per_label = points["series"].nunique() == 1 and labels.groupby("side")["label"].nunique().max() > 1
    fig, (tput, rt) = _figure(2)
    for (side, series), group in points.groupby(["side", "series"], sort=False):  # capacity's order: by value
        name = f"{side} {series}".strip()
        line = tput.plot(group["load_level"], group["calls_per_s"], SIDE_STYLE.get(side, "-"), marker="o", label=name)[0]
        if not per_label:
            rt.plot(group["load_level"], group["avg_ms"], SIDE_STYLE.get(side, "-"), marker="o", color=line.get_color(),
                    label=f"{name} avg")
            rt.plot(group["load_level"], group["p95_ms"], ":", marker="^", color=line.get_color(), label=f"{name} p95")
    knees = [record for record in data["capacity"].to_dict("records") if not pd.isna(record["saturated"])
             and bool(record["saturated"]) and not pd.isna(record["knee_load_level"])]
    for number, record in enumerate(knees):  # one knee per side and series, marked and labelled
        where = " ".join(filter(None, [record["side"], record["series"]]))
        tput.plot([record["knee_load_level"]], [record["knee_calls_per_s"]], "kx", markersize=9)
        tput.annotate(f"knee ({where}): it {int(record['knee_iteration'])}",
                      (record["knee_load_level"], record["knee_calls_per_s"]), xytext=(10, -16 - 14 * number),
                      textcoords="offset points", fontsize=8, arrowprops={"arrowstyle": "->", "lw": 0.8})
    if per_label:
        levels = points.drop_duplicates("iteration")[["iteration", "load_level"]]
        for (side, label), group in labels.merge(levels, on="iteration").groupby(["side", "label"], sort=True):
            rt.plot(group["load_level"], group["p95_ms"], SIDE_STYLE.get(side, "-"), marker="o", label=f"{side} {label} p95")
    tput.set_ylabel("throughput (calls/s)")
    rt.set_ylabel("response time (ms)")
    tput.set_ylim(bottom=0)
    rt.set_ylim(bottom=0)
    rt.set_xlabel("load level (vus, nodes x threads, users or capacity.load_key)")
    _legend(tput)
    _legend(rt)
    return Chart("load", "Throughput and response time against load",
                 "marts capacity and iteration_summary" + (", and p95 per label from requests" if per_label else ""),
                 _encode(fig))


def _samples(data: ReportData, *kinds: str) -> pd.DataFrame:
    samples = data["report_host_samples"]
    return samples[samples["kind"].isin(kinds)] if not samples.empty else samples


def cpu_chart(data: ReportData) -> Chart | None:
    """CPU busy (user + system) and I/O wait per host over time, from vmstat."""
    samples = _samples(data, "vmstat")
    if samples.empty:
        return None
    fig, (ax,) = _figure(1, 3.2)
    for (host, role), group in samples.groupby(["host", "role"], sort=True):
        at = _naive_utc(group["sampled_at"])
        line = ax.plot(at, group["cpu_busy_pct"], "-", lw=1.2, label=f"{host} ({role}) busy")[0]
        ax.plot(at, group["cpu_wait_pct"], ":", lw=1.0, color=line.get_color(), label=f"{host} wait")
    ax.set_ylabel("CPU %")
    ax.set_ylim(0, 100)
    _legend(ax)
    _mark_iterations([ax], data["report_iterations"])
    _time_axis(ax)
    return Chart("cpu", "CPU per host", "view host_samples (vmstat): user + system, and I/O wait", _encode(fig))


def jvm_chart(data: ReportData) -> Chart | None:
    """Old and young generation in use, and GC time since the JVM started, per JVM (jstat file)."""
    samples = _samples(data, "jstat")
    if samples.empty:
        return None
    fig, (heap, gc) = _figure(2)
    for (host, subject), group in samples.groupby(["host", "subject"], sort=True):
        at = _naive_utc(group["sampled_at"])
        line = heap.plot(at, group["old_used_kb"] / 1024, "-", label=f"{host} old")[0]
        heap.plot(at, group["young_used_kb"] / 1024, ":", color=line.get_color(), label=f"{host} young")
        gc.plot(at, group["gc_time_s"], "-", color=line.get_color(), label=f"{host} ({subject})")
    heap.set_ylabel("heap used (MiB)")
    gc.set_ylabel("GC time since start (s)")
    _legend(heap)
    _legend(gc)
    _mark_iterations([heap, gc], data["report_iterations"])
    _time_axis(gc)
    return Chart("jvm", "Heap and GC per JVM", "view host_samples (jstat): KB shown as MiB", _encode(fig))


def container_chart(data: ReportData) -> Chart | None:
    """Memory in use and network bytes (since the container started) per container, from docker stats."""
    samples = _samples(data, "docker_stats")
    if samples.empty:
        return None
    fig, (memory, network) = _figure(2)
    for (host, container), group in samples.groupby(["host", "subject"], sort=True):
        at = _naive_utc(group["sampled_at"])
        line = memory.plot(at, group["mem_used_bytes"] / MiB, "-", label=f"{host}/{container}")[0]
        network.plot(at, group["net_in_bytes"] / MiB, "-", color=line.get_color(), label=f"{host}/{container} in")
        network.plot(at, group["net_out_bytes"] / MiB, ":", color=line.get_color(), label=f"{host}/{container} out")
    memory.set_ylabel("memory used (MiB)")
    network.set_ylabel("network (MiB since start)")
    _legend(memory)
    _legend(network)
    _mark_iterations([memory, network], data["report_iterations"])
    _time_axis(network)
    return Chart("containers", "Container memory and network", "view host_samples (docker stats)", _encode(fig))


def network_chart(data: ReportData) -> Chart | None:
    """Received and sent Gbps per interface that moved any bytes, from sar -n DEV or procfs's /proc/net/dev."""
    samples = _samples(data, "sar", "procfs")
    samples = samples[samples["rx_bytes_per_s"].notna()]  # procfs: its process rows, a series' first sample
    if samples.empty:
        return None
    moved = samples.groupby(["host", "subject"])[["rx_bytes_per_s", "tx_bytes_per_s"]].transform("max").sum(axis=1) > 0
    fig, (ax,) = _figure(1, 3.2)
    for (host, interface), group in samples[moved].groupby(["host", "subject"], sort=True):
        at = _naive_utc(group["sampled_at"])
        line = ax.plot(at, group["rx_bytes_per_s"] * 8 / 1e9, "-", lw=1.2, label=f"{host}/{interface} in")[0]
        ax.plot(at, group["tx_bytes_per_s"] * 8 / 1e9, ":", lw=1.0, color=line.get_color(),
                label=f"{host}/{interface} out")
    ax.set_ylabel("Gbps")
    _legend(ax)
    _mark_iterations([ax], data["report_iterations"])
    _time_axis(ax)
    return Chart("network", "Network per interface", "view host_samples (sar -n DEV, procfs): interfaces that moved bytes",
                 _encode(fig))


def process_chart(data: ReportData) -> Chart | None:
    """CPU (of one CPU, as pidstat prints it) and threads per watched process, from pidstat or procfs."""
    samples = _samples(data, "pidstat", "procfs")
    samples = samples[samples["threads"].notna() | samples["cpu_pct"].notna()]  # procfs: not its interface rows
    if samples.empty:
        return None
    fig, (cpu, threads) = _figure(2)
    for (host, process), group in samples.groupby(["host", "subject"], sort=True):
        at = _naive_utc(group["sampled_at"])
        line = cpu.plot(at, group["cpu_pct"], "-", label=f"{host} {process}")[0]
        threads.plot(at, group["threads"], "-", color=line.get_color(), label=f"{host} {process}")
    cpu.set_ylabel("CPU % (of one CPU)")
    threads.set_ylabel("threads")
    _legend(cpu)
    _mark_iterations([cpu, threads], data["report_iterations"])
    _time_axis(threads)
    return Chart("processes", "CPU and threads per process", "view host_samples (pidstat, procfs)", _encode(fig))


def all_charts(data: ReportData) -> dict[str, Chart]:
    """Every chart that has data, by key."""
    charts = [make(data) for make in (minute_chart, load_chart, cpu_chart, jvm_chart, container_chart, network_chart,
                                      process_chart)]
    return {chart.key: chart for chart in charts if chart is not None}
