"""Monitors on the stage hosts: samplers started detached, every line stamped with its UTC time.

`vmstat -t` stamps its own lines (with TZ=UTC); `jstat` and `docker stats` go through a loop that prefixes
each line (jstat) or each frame (docker) with an ISO-8601 time, so no sample needs its time guessed.
Access logs and other files are written by the service itself and only collected at the end.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tasks.stage.config import Monitor
from tasks.stage.procfs_sampler import procfs_command
from tasks.stage.shell import quote
from tasks.stage.transport import StageError, Transport

STAMP = "date -u +%Y-%m-%dT%H:%M:%S.%3NZ"
# sysstat prints wall-clock times of day and the date once: UTC, 24-hour times, an ISO date, decimal points
SYSSTAT_ENV = "TZ=UTC LC_ALL=C S_TIME_FORMAT=ISO"


@dataclass
class StartedMonitor:
    """A monitor that runs (or a file to collect) on one host."""

    host: str
    monitor: Monitor
    name: str  # detached process name, or "" for a file written by the service
    remote_path: str
    local_name: str


def _stamp_lines(command: str) -> str:
    return f"{command} | while IFS= read -r line; do printf '%s %s\\n' \"$({STAMP})\" \"$line\"; done"


def sampler_command(monitor: Monitor, pid: str | None = None) -> str:
    """The shell command of one sampler (pid: the JVM's, for jstat and pidstat)."""
    seconds = max(1, math.ceil(monitor.interval_s))
    if monitor.kind == "vmstat":
        return f"TZ=UTC LC_ALL=C exec vmstat -t {seconds}"
    if monitor.kind == "jstat":
        millis = max(100, round(monitor.interval_s * 1000))
        return _stamp_lines(f"LC_ALL=C jstat -gc -t {quote(pid or '')} {millis}ms")
    if monitor.kind == "docker_stats":
        names = " ".join(quote(c) for c in monitor.containers)
        return f"while :; do {STAMP}; docker stats --no-stream {names}; sleep {seconds}; done"
    if monitor.kind == "sar":
        return f"{SYSSTAT_ENV} exec sar -n DEV -d {seconds}"
    if monitor.kind == "pidstat":
        return f"{SYSSTAT_ENV} exec pidstat -h -u -r -v {_pidstat_tasks(monitor, pid)} {seconds}"
    if monitor.kind == "procfs":
        return procfs_command(monitor.interval_s, monitor.processes, monitor.pid_file, pid)
    raise ValueError(f"{monitor.kind} is collected, not sampled")


def _pidstat_tasks(monitor: Monitor, pid: str | None) -> str:
    """`-p PID`, or every task (idle ones too: `-C` alone shows only busy ones) whose name is one of `processes`."""
    if not monitor.processes:
        return f"-p {quote(pid or '')}"
    names = "|".join(re.escape(name) for name in monitor.processes)
    return f"-p ALL -C {quote(f'^({names})$')}"


def _watched_pid(transport: Transport, monitor: Monitor) -> str:
    command = f"cat {quote(monitor.pid_file)}" if monitor.pid_file else monitor.pid_command
    pid = transport.run(command, timeout_s=30).stdout.strip().splitlines()
    if not pid or not pid[0].strip().isdigit():
        raise StageError(f"{transport.name}: no {monitor.kind} pid from `{command}` (got {pid!r})")
    return pid[0].strip()


def start_monitors(per_host: dict[str, list[Monitor]], transports: dict[str, Transport], run_dir: str,
                   started: list[StartedMonitor]) -> None:
    """Start every sampler of every host into `started`, noting files written by services for collection.

    Each sampler is added as soon as it runs, so when a later one fails to start (a JVM pid not found, a
    host gone), the caller still holds every sampler already started and can stop it.
    """
    for host, monitors in per_host.items():
        transport = transports[host]
        folder = f"{run_dir}/monitors/{host}"  # one folder per host: two hosts may share a machine
        for number, monitor in enumerate(monitors, start=1):
            local_name = f"{monitor.kind}-{number}.log" if monitor.kind != "access_log" else f"access-{number}.log"
            if monitor.kind in ("access_log", "file"):
                started.append(StartedMonitor(host, monitor, "", monitor.path, Path(monitor.path).name if monitor.kind == "file" else local_name))
                continue
            # procfs reads its pid file again each interval itself
            by_pid = monitor.pid_command if monitor.kind == "procfs" else monitor.pid_file or monitor.pid_command
            pid = _watched_pid(transport, monitor) if by_pid and not monitor.processes else None
            name = f"monitor-{monitor.kind.replace('_', '-')}-{number}"
            transport.start_detached(name, sampler_command(monitor, pid), folder)
            started.append(StartedMonitor(host, monitor, name, f"{folder}/{name}.log", local_name))


# Samplers stopped at once: each stop waits for its process to end (0.1-0.2 s), seven of them one after another
# took a second of the road from the last iteration to the report. Below sshd's default MaxSessions (10 channels
# per connection), with room for the lease's renewals.
STOPPING_AT_ONCE = 8


def stop_monitors(started: list[StartedMonitor], transports: dict[str, Transport]) -> list[str]:
    """Stop every sampler, all at once, and wait for every one; returns the problems met, in the monitors'
    order (a monitor that died early is worth saying)."""
    running = [m for m in started if m.name]
    if not running:
        return []
    with ThreadPoolExecutor(max_workers=min(len(running), STOPPING_AT_ONCE), thread_name_prefix="stop") as pool:
        return [problem for problem in pool.map(partial(_stop_monitor, transports=transports), running) if problem]


def _stop_monitor(m: StartedMonitor, transports: dict[str, Transport]) -> str | None:
    try:
        if transports[m.host].stop_detached(m.name, str(Path(m.remote_path).parent)) in ("absent", "ended"):
            return f"{m.host}: monitor {m.name} was no longer running when stopped"
    except Exception as exc:  # one host's failure must not keep the others running
        return f"{m.host}: could not stop {m.name}: {exc}"
    return None


def collect_monitors(started: list[StartedMonitor], transports: dict[str, Transport], bundle: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Copy every monitor's file into `bundle/<host>/`; returns manifest sources and the files missed."""
    sources, missed = [], []
    for m in started:
        local = bundle / m.host / m.local_name
        try:
            transports[m.host].get(m.remote_path, local)
        except Exception as exc:
            missed.append(f"{m.host}:{m.remote_path}: {exc}")
            continue
        source: dict[str, Any] = {"kind": m.monitor.kind, "host": m.host, "path": f"{m.host}/{m.local_name}"}
        if m.monitor.kind == "file":
            continue
        if m.monitor.kind in ("sar", "pidstat"):
            source["timezone"] = "UTC"  # sampler_command runs them with TZ=UTC
        if m.monitor.kind == "access_log":
            options = {"format": m.monitor.format, "preset": m.monitor.preset, "duration_unit": m.monitor.duration_unit}
            source.update({k: v for k, v in options.items() if v})
        sources.append(source)
    return sources, missed
