"""Bring the stage up and down: provision and teardown steps, background processes, health waits.

Teardown is best-effort by design: every step is tried even when an earlier one failed, and the
problems are returned so the run can say what was left behind.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tasks.stage.config import (
    BackgroundStep,
    RunStep,
    Step,
    UploadStep,
    WaitHttpStep,
    WaitTcpStep,
)
from tasks.stage.shell import join, quote
from tasks.stage.transport import StageError, Transport

_HTTP_PROBE = (
    "curl -fsS -o /dev/null --max-time 2 \"$0\" 2>/dev/null || "
    "python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \"$0\" 2>/dev/null"
)
_TCP_PROBE = "python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 2)' \"$0\" \"$1\""


def background_dir(run_dir: str) -> str:
    """Where background processes keep their pid and output files."""
    return f"{run_dir}/background"


def _wait(transport: Transport, probe: str, args: list[str], timeout_s: float, what: str) -> None:
    script = f"timeout {timeout_s:g} sh -c {quote(f'until {probe}; do sleep 0.5; done')} {join(args)}"
    result = transport.run(script, timeout_s=timeout_s + 15, check=False)
    if result.exit_code != 0:
        raise StageError(f"{transport.name}: {what} not ready after {timeout_s:g} s")


def run_step(step: Step, transports: dict[str, Transport], run_dir: str, repo: Path) -> None:
    """Carry out one provision or teardown step."""
    transport = transports[step.host]
    if isinstance(step, RunStep):
        transport.run(step.run, timeout_s=step.timeout_s, check=step.check)
    elif isinstance(step, UploadStep):
        transport.run(["mkdir", "-p", str(Path(step.to).parent)], timeout_s=30)
        transport.put(repo / step.upload, step.to)
    elif isinstance(step, WaitHttpStep):
        _wait(transport, _HTTP_PROBE, [step.wait_http], step.timeout_s, step.wait_http)
    elif isinstance(step, WaitTcpStep):
        address, _, port = step.wait_tcp.rpartition(":")
        _wait(transport, _TCP_PROBE, [address, port], step.timeout_s, step.wait_tcp)
    elif isinstance(step, BackgroundStep):
        transport.start_detached(step.background, step.command, background_dir(run_dir))


def provision(steps: list[Step], transports: dict[str, Transport], run_dir: str, repo: Path) -> None:
    """Run the provision steps in order; the first failure stops the campaign (teardown still runs)."""
    for step in steps:
        run_step(step, transports, run_dir, repo)


def background_steps(steps: list[Step]) -> list[BackgroundStep]:
    """The steps that start a process running through the whole test."""
    return [step for step in steps if isinstance(step, BackgroundStep)]


def stop_background(steps: list[Step], transports: dict[str, Transport], run_dir: str) -> tuple[list[str], list[str]]:
    """Stop every background process (TERM, then KILL), last started first. Returns those that had ended on their
    own (as `background_alive` says it: `host: name is not running`), then the problems met."""
    ended, problems = [], []
    for step in reversed(background_steps(steps)):
        try:
            if transports[step.host].stop_detached(step.background, background_dir(run_dir)) == "ended":
                ended.insert(0, _not_running(step))
        except Exception as exc:  # keep tearing down the rest
            problems.append(f"{step.host}: stopping {step.background}: {exc}")
    return ended, problems


def teardown(provisioned: list[Step], steps: list[Step], transports: dict[str, Transport], run_dir: str,
             repo: Path, stopped: Callable[[], None] = lambda: None) -> list[str]:
    """Stop background processes (if still running), call `stopped`, then run the teardown steps; returns every
    problem met (a background process that had ended on its own is one)."""
    ended, problems = stop_background(provisioned, transports, run_dir)
    problems = ended + problems
    stopped()
    for step in steps:
        try:
            run_step(step, transports, run_dir, repo)
        except Exception as exc:
            problems.append(f"{step.host}: teardown step failed: {exc}")
    return problems


def background_alive(steps: list[Step], transports: dict[str, Transport], run_dir: str) -> list[str]:
    """Background processes that are no longer running (a killed service, a background load that died)."""
    return [
        _not_running(step) for step in background_steps(steps)
        if not transports[step.host].is_running(step.background, background_dir(run_dir))
    ]


def _not_running(step: BackgroundStep) -> str:
    return f"{step.host}: {step.background} is not running"
