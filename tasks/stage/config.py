"""The stage's part of a campaign file: provision and teardown steps, background processes, monitors."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, model_validator

from tasks.bundle.kinds import HOST_SAMPLE_KINDS
from tasks.bundle.strict import NAME_PATTERN, StrictModel

MonitorKind = Literal[(*HOST_SAMPLE_KINDS, "access_log", "file")]  # samplers (tasks/bundle/kinds.py) or a file


class RunStep(StrictModel):
    """Run a shell command on a host (provision, seed, teardown)."""

    run: str
    host: str
    timeout_s: float = Field(300, gt=0)
    check: bool = True


class UploadStep(StrictModel):
    """Copy a file from the repository (usually `infra/`) to a host."""

    upload: str
    to: str
    host: str


class WaitHttpStep(StrictModel):
    """Wait until an HTTP URL answers 2xx (asked from the host, with curl or python3)."""

    wait_http: str
    host: str
    timeout_s: float = Field(60, gt=0)


class WaitTcpStep(StrictModel):
    """Wait until a TCP port accepts connections (`host:port`, asked from the host)."""

    wait_tcp: str
    host: str
    timeout_s: float = Field(60, gt=0)


class BackgroundStep(StrictModel):
    """A process that runs during the whole test (the service, a background load); stopped at teardown."""

    background: str = Field(pattern=NAME_PATTERN)
    command: str
    host: str
    # A background load declares its rate and where its results are (a request source: kind, path and
    # reader options); they are collected into the bundle and the validation checks the rate.
    declared_rate_per_s: float | None = Field(default=None, gt=0)
    results: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _results_with_rate(self) -> "BackgroundStep":
        if (self.results is None) != (self.declared_rate_per_s is None):
            raise ValueError("a background load gives both declared_rate_per_s and results ({kind, path})")
        if self.results is not None and not {"kind", "path"} <= self.results.keys():
            raise ValueError("results needs kind and path")
        return self


_STEP_KINDS = {"run": RunStep, "upload": UploadStep, "wait_http": WaitHttpStep, "wait_tcp": WaitTcpStep,
               "background": BackgroundStep}


def _step_kind(value: Any) -> str | None:
    """Which step a mapping is, by the key that names its action (so an error speaks of that step only)."""
    if isinstance(value, dict):
        return next((key for key in _STEP_KINDS if key in value), None)
    return next((key for key, model in _STEP_KINDS.items() if isinstance(value, model)), None)


Step = Annotated[
    Union[tuple(Annotated[model, Tag(key)] for key, model in _STEP_KINDS.items())],
    Discriminator(_step_kind, custom_error_type="step_kind",
                  custom_error_message=f"a step needs one of the keys {', '.join(_STEP_KINDS)}"),
]


class Monitor(StrictModel):
    """One log to collect from a host; samplers are started detached with a timestamp on every line."""

    kind: MonitorKind
    interval_s: float = Field(1, gt=0)
    # jstat, pidstat and procfs: the JVM (process) to watch, by pid file or by a command that prints the pid
    pid_file: str | None = None
    pid_command: str | None = None
    # docker_stats: containers (all running ones when empty)
    containers: list[str] = Field(default_factory=list)
    # pidstat and procfs: processes by command name (exact, as `ps -o comm` shows it); when given, the pid is not used
    # (procfs watches no process when none of the three is given: network and disks only)
    processes: list[str] = Field(default_factory=list)
    # access_log and file: the path on the host, and the reader options for the bundle manifest
    path: str | None = None
    format: str | None = None
    preset: str | None = None
    duration_unit: Literal["ms", "us", "s"] | None = None

    @model_validator(mode="after")
    def _needs(self) -> "Monitor":
        if self.kind == "jstat" and not (self.pid_file or self.pid_command):
            raise ValueError("jstat needs pid_file or pid_command")
        if self.kind == "pidstat" and not (self.processes or self.pid_file or self.pid_command):
            raise ValueError("pidstat needs processes (command names), pid_file or pid_command")
        if self.kind in ("access_log", "file") and not self.path:
            raise ValueError(f"{self.kind} needs path")
        if self.kind == "access_log" and not (self.format or self.preset):
            raise ValueError("access_log needs format (the server's pattern) or preset")
        return self
