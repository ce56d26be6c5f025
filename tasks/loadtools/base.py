"""The lifecycle every load tool follows on its generators: prepare, start, wait, stop, collect.

A tool runs detached on each generator host (so a dropped SSH connection does not kill the load) with
its exit code written to a file; `wait` polls until every generator is done or the deadline passes (the
transport reconnects meanwhile). The wrapper also writes the tool's start and end times as the host saw
them (`started-at`, `ended-at`): the iteration's times are the tool's, not when the controller noticed.
A non-zero exit that is not a result (k6's 99 is: thresholds crossed) raises `LoadToolError`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

from tasks.bundle.load import achieved_share, offered_per_s
from tasks.bundle.load_window import WINDOW_READERS, LoadWindow
from tasks.loadtools.config import Load
from tasks.stage.monitors import STAMP
from tasks.stage.shell import join, quote
from tasks.stage.transport import Transport

POLL_S = 0.5
GONE_GRACE_S = 3.0


@dataclass
class StepResult:
    """What one iteration measured, from the load tool's summaries of all its generators."""

    index: int
    load: dict[str, Any]
    seconds: float
    calls: int
    errors: int
    # client-side figures for the stop rule: avg_ms, p95_ms, ... error_rate
    metrics: dict[str, float] = field(default_factory=dict)
    dropped: int = 0  # calls an open-model tool could not start (k6 dropped_iterations)

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0

    def figure(self, metric: str) -> float | None:
        """A requirement metric from the summary: calls/s and the failure ratio counting dropped calls derive
        from the counts (as iteration_summary's do), the others are the tool's own."""
        if metric == "calls_per_s":
            return self.calls_per_s
        if metric == "error_rate_with_dropped":
            sent_or_dropped = self.calls + self.dropped
            return (self.errors + self.dropped) / sent_or_dropped if sent_or_dropped else None
        return self.metrics.get(metric)

    @property
    def offered_per_s(self) -> float | None:
        return offered_per_s(self.load, self.calls, self.dropped, self.seconds)

    @property
    def achieved_share(self) -> float | None:
        return achieved_share(self.load, self.calls, self.dropped)


class LoadToolError(RuntimeError):
    """A load tool failed on a generator; names the generator, the iteration and the exit code."""


@dataclass
class Running:
    """One tool process on one generator for one iteration."""

    generator: str
    name: str  # detached process name
    remote_dir: str
    started: float


class LoadTool(ABC):
    """Runs one tool's iterations on the generator hosts."""

    ok_exit_codes: tuple[int, ...] = (0,)

    def __init__(self, spec: Load, transports: dict[str, Transport], run_dir: str, repo: Path):
        self.spec, self.transports, self.run_dir, self.repo = spec, transports, run_dir, repo
        self.script_remote = f"{run_dir}/{PurePosixPath(spec.script).name}"
        self.missing: list[str] = []  # result files a generator did not write (a tool that died early)

    def prepare(self) -> None:
        """Copy the script or plan to every generator."""
        for generator in self.spec.generators:
            transport = self.transports[generator]
            transport.run(["mkdir", "-p", self.run_dir], timeout_s=30)
            transport.put(self.repo / self.spec.script, self.script_remote)

    @abstractmethod
    def commands(self, index: int, step: dict[str, Any]) -> dict[str, list[str]]:
        """The command line per generator for one iteration (each writes into its iteration folder)."""

    def generators_for(self, step: dict[str, Any]) -> list[str]:
        """The generators a step runs on: the first `nodes` of them (a step key), or all."""
        nodes = int(step.get("nodes", len(self.spec.generators)))
        if not 1 <= nodes <= len(self.spec.generators):
            raise LoadToolError(f"step {step} asks for {nodes} nodes; the campaign has {len(self.spec.generators)} generators")
        return self.spec.generators[:nodes]

    def iteration_dir(self, index: int, generator: str) -> str:
        """Where a generator's tool writes one iteration: a folder of its own, since two generators may
        be one machine (the local stage's, or two SSH names of one host)."""
        return f"{self.run_dir}/iter{index}/{generator}"

    def start(self, index: int, step: dict[str, Any]) -> list[Running]:
        """Start the iteration on all its generators at once."""
        running = []
        for generator, command in self.commands(index, step).items():
            folder = self.iteration_dir(index, generator)
            at = {name: quote(f"{folder}/{name}") for name in ("started-at", "ended-at", "exit-code")}
            script = (f"{STAMP} > {at['started-at']}; {join(command)}; code=$?; "
                      f"{STAMP} > {at['ended-at']}; echo $code > {at['exit-code']}")
            name = f"load-iter{index}"
            self.transports[generator].start_detached(name, script, folder)
            running.append(Running(generator, name, folder, time.monotonic()))
        return running

    def wait(self, running: list[Running], timeout_s: float) -> None:
        """Wait for every generator to finish; stop them all and raise past the deadline.

        Done means the wrapper wrote `exit-code` (it always does, whatever the tool's exit). A process
        group that looks gone without it is given a few seconds: right after the start, the new session
        may not exist yet, and a tool killed from outside never writes one.
        """
        deadline = time.monotonic() + timeout_s
        pending = list(running)
        gone_since: dict[str, float] = {}
        while pending:
            still = []
            for r in pending:
                transport = self.transports[r.generator]
                if transport.exists(f"{r.remote_dir}/exit-code"):
                    continue
                if transport.is_running(r.name, r.remote_dir):
                    gone_since.pop(r.generator, None)
                elif time.monotonic() - gone_since.setdefault(r.generator, time.monotonic()) > GONE_GRACE_S:
                    continue  # killed: _check_exit says so
                still.append(r)
            pending = still
            if pending and time.monotonic() > deadline:
                self.stop(running)
                names = ", ".join(r.generator for r in pending)
                raise LoadToolError(f"load did not finish within {timeout_s:.0f} s on {names}; stopped")
            if pending:
                time.sleep(POLL_S)
        for r in running:
            self._check_exit(r)

    def stop(self, running: list[Running]) -> list[str]:
        """Stop every generator's process group (TERM, then KILL); what happened to each, as sentences."""
        said = []
        for r in running:
            what = self.transports[r.generator].stop_detached(r.name, r.remote_dir)
            said.append(f"{self.spec.tool} on {r.generator} " + (
                "had already ended" if what in ("absent", "ended") else f"was still running and was {what}"))
        return said

    def times(self, running: list[Running]) -> tuple[datetime | None, datetime | None]:
        """When the tool started on its first generator and ended on its last, by the hosts' clocks
        (None where a generator wrote no time: not started, or stopped from outside)."""
        found: dict[str, list[datetime]] = {"started-at": [], "ended-at": []}
        for r in running:
            for name, moments in found.items():
                text = self.transports[r.generator].run(["cat", f"{r.remote_dir}/{name}"], timeout_s=30, check=False,
                                                        idempotent=True).stdout.strip()
                try:
                    moments.append(datetime.fromisoformat(text))
                except ValueError:
                    pass
        starts, ends = found["started-at"], found["ended-at"]
        return (min(starts) if starts else None,
                max(ends) if ends and len(ends) == len(running) else None)

    def _check_exit(self, r: Running) -> None:
        transport = self.transports[r.generator]
        result = transport.run(["cat", f"{r.remote_dir}/exit-code"], timeout_s=30, check=False, idempotent=True)
        code = result.stdout.strip()
        if not code.isdigit() or int(code) not in self.ok_exit_codes:
            log = transport.run(["tail", "-c", "3000", f"{r.remote_dir}/{r.name}.log"], timeout_s=30, check=False)
            raise LoadToolError(
                f"{self.spec.tool} on {r.generator} exited with {code or 'no exit code'} "
                f"({r.remote_dir}); output tail:\n{log.stdout.strip()}"
            )

    def fetch(self, r: Running, remote: str, local: Path) -> bool:
        """Copy one result file if the generator wrote it; a missing one is noted, not raised."""
        transport = self.transports[r.generator]
        path = f"{r.remote_dir}/{remote}"
        if not transport.exists(path):
            self.missing.append(f"{r.generator}:{path}")
            return False
        transport.get(path, local)
        return True

    # (file in the iteration folder, name in the bundle, source kind or None for a kept-only file);
    # "{name}.log" is the tool's own console output.
    result_files: tuple[tuple[str, str, str | None], ...] = ()

    def collect(self, index: int, running: list[Running], bundle: Path) -> list[dict[str, Any]]:
        """Copy the iteration's result files into `bundle/<generator>/`; return their manifest sources."""
        sources = []
        for r in running:
            for remote, local, kind in self.result_files:
                local = local.format(index=index)
                if self.fetch(r, remote.format(name=r.name), bundle / r.generator / local) and kind:
                    sources.append({"kind": kind, "host": r.generator, "path": f"{r.generator}/{local}",
                                    "iteration": index, "role": "loadgen"})
        return sources

    def load_window(self, bundle: Path, sources: list[dict[str, Any]]) -> LoadWindow:
        """The calls the step's result files hold and when the load ran: the first sample's start to the last
        sample's end over every generator (bundle/load_window.py)."""
        window = LoadWindow(0)
        for source in sources:
            if source["kind"] in WINDOW_READERS and (bundle / source["path"]).is_file():
                window += WINDOW_READERS[source["kind"]](bundle / source["path"])
        return window

    def why_silent(self, running: list[Running]) -> str:
        """What the tool said on its generators when a step sent no calls: its console output's last lines."""
        said = []
        for r in running:
            tail = self.transports[r.generator].run(["tail", "-n", "5", f"{r.remote_dir}/{r.name}.log"], timeout_s=30,
                                                    check=False, idempotent=True).stdout.strip()
            said.append(f"{r.generator}: " + (" | ".join(tail.splitlines()) or "no output"))
        return "; ".join(said)

    @abstractmethod
    def summarize(self, index: int, step: dict[str, Any], seconds: float, bundle: Path,
                  sources: list[dict[str, Any]]) -> StepResult:
        """The iteration's throughput and client-side figures from the collected files (for the ramp)."""


def step_variables(step: dict[str, Any], spec: Load) -> dict[str, str]:
    """A step's keys as tool variables (upper-cased for k6, as given for JMeter), plus the duration.

    A step key never replaces an env value or the duration (the campaign refuses one at load; a step made
    later, such as a soak's target, is checked here).
    """
    variables = {str(k): str(v) for k, v in spec.env.items()}
    taken = {name.lower() for name in variables} | {"duration", "duration_s"}
    if clash := sorted(str(k) for k in step if str(k).lower() in taken):
        raise LoadToolError(f"step {step}: key {clash[0]!r} would replace load.env or the duration")
    variables.update({str(k): str(v) for k, v in step.items()})
    variables["duration_s"] = f"{spec.duration_s:g}"
    return variables
