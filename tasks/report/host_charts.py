"""The report's charts of host samples (vmstat, jstat, docker stats, sar, pidstat, procfs) against time,
drawn as the request charts are (tasks/report/charts.py)."""

from __future__ import annotations

import pandas as pd

from tasks.report.charts import MiB, Chart, _encode, _figure, _legend, _mark_iterations, _naive_utc, _time_axis
from tasks.report.data import ReportData


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


def host_charts(data: ReportData) -> list[Chart | None]:
    """The host charts in the order the report shows them (None where a run has no such samples)."""
    return [make(data) for make in (cpu_chart, jvm_chart, container_chart, network_chart, process_chart)]
