"""Campaign files (`campaigns/*.yaml`): validated at load, with errors that name the file and the key.

A campaign says which hosts make up the stage, how to bring it up and down, what to monitor, how to
raise the load step by step and where to keep the perflog bundle. Secrets are never written here: SSH
keys come from a key file, an environment variable or a Prefect Secret block; S3 credentials from the
AWS chain or a Prefect block.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tasks.manifest import CapacityOptions, Requirement, describe_validation_error
from tasks.store import StoreConfig
from tasks.transport import HostConfig

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class CampaignError(ValueError):
    """A campaign file that cannot be used; the message names the file and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunStep(_Strict):
    """Run a shell command on a host (provision, seed, teardown)."""

    run: str
    host: str
    timeout_s: float = Field(300, gt=0)
    check: bool = True


class UploadStep(_Strict):
    """Copy a file from the repository (usually `infra/`) to a host."""

    upload: str
    to: str
    host: str


class WaitHttpStep(_Strict):
    """Wait until an HTTP URL answers 2xx (asked from the host, with curl or python3)."""

    wait_http: str
    host: str
    timeout_s: float = Field(60, gt=0)


class WaitTcpStep(_Strict):
    """Wait until a TCP port accepts connections (`host:port`, asked from the host)."""

    wait_tcp: str
    host: str
    timeout_s: float = Field(60, gt=0)


class BackgroundStep(_Strict):
    """A process that runs during the whole test (the service, a background load); stopped at teardown."""

    background: str = Field(pattern=_NAME.pattern)
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


Step = Union[RunStep, UploadStep, WaitHttpStep, WaitTcpStep, BackgroundStep]


class Monitor(_Strict):
    """One log to collect from a host; samplers are started detached with a timestamp on every line."""

    kind: Literal["vmstat", "jstat", "docker_stats", "access_log", "file"]
    interval_s: float = Field(1, gt=0)
    # jstat: the JVM to watch, by pid file or by a command that prints the pid
    pid_file: str | None = None
    pid_command: str | None = None
    # docker_stats: containers (all running ones when empty)
    containers: list[str] = Field(default_factory=list)
    # access_log and file: the path on the host, and the reader options for the bundle manifest
    path: str | None = None
    format: str | None = None
    preset: str | None = None
    duration_unit: Literal["ms", "us", "s"] | None = None

    @model_validator(mode="after")
    def _needs(self) -> "Monitor":
        if self.kind == "jstat" and not (self.pid_file or self.pid_command):
            raise ValueError("jstat needs pid_file or pid_command")
        if self.kind in ("access_log", "file") and not self.path:
            raise ValueError(f"{self.kind} needs path")
        if self.kind == "access_log" and not (self.format or self.preset):
            raise ValueError("access_log needs format (the server's pattern) or preset")
        return self


class StopRule(_Strict):
    """When a ramp stops: throughput no longer grows with the load, or a requirement broke."""

    min_throughput_gain_pct: float = Field(10, ge=0)
    min_load_gain_pct: float = Field(50, ge=0)
    on_requirement_broken: bool = True


class Ramp(_Strict):
    """Load steps generated from a start: multiply (`factor`) or add (`increment`) one key each step."""

    start: dict[str, Any]
    key: str = "vus"
    factor: float | None = Field(default=None, gt=1)
    increment: float | None = Field(default=None, gt=0)
    max_steps: int = Field(6, ge=1, le=100)
    stop: StopRule = Field(default_factory=StopRule)

    @model_validator(mode="after")
    def _one_growth(self) -> "Ramp":
        if (self.factor is None) == (self.increment is None):
            raise ValueError("give exactly one of factor or increment")
        if self.key not in self.start:
            raise ValueError(f"start has no {self.key!r} to raise")
        return self


class Load(_Strict):
    """The load tool, its script or plan, the generators and the iterations."""

    tool: Literal["k6", "jmeter"]
    binary: str | None = None  # default: `k6` or `jmeter` on the generator's PATH
    script: str
    generators: list[str] = Field(min_length=1)
    duration_s: float = Field(gt=0)
    pause_s: float = Field(0, ge=0)
    env: dict[str, str] = Field(default_factory=dict)
    steps: list[dict[str, Any]] | None = None
    ramp: Ramp | None = None

    @model_validator(mode="after")
    def _steps_or_ramp(self) -> "Load":
        if (self.steps is None) == (self.ramp is None):
            raise ValueError("give exactly one of steps (a list) or ramp")
        if self.steps is not None and not self.steps:
            raise ValueError("steps is empty")
        return self


class Schedule(_Strict):
    """When the nightly deployment runs."""

    cron: str = "0 2 * * *"
    timezone: str = "UTC"
    active: bool = True


class Campaign(_Strict):
    """A whole campaign file."""

    campaign: str = Field(pattern=_NAME.pattern)
    scenario: str = ""
    stage: str = Field(pattern=_NAME.pattern)
    labels: dict[str, str] = Field(default_factory=dict)
    timezone: str = "UTC"
    vars: dict[str, str] = Field(default_factory=dict)
    workdir: str = "/tmp/perfcampaign"
    hosts: dict[str, HostConfig] = Field(min_length=1)
    requirements: list[Requirement] = Field(default_factory=list)
    thresholds: dict[str, float] = Field(default_factory=dict)
    capacity: CapacityOptions = Field(default_factory=CapacityOptions)
    provision: list[Annotated[Step, Field(union_mode="left_to_right")]] = Field(default_factory=list)
    teardown: list[Annotated[Step, Field(union_mode="left_to_right")]] = Field(default_factory=list)
    monitors: dict[str, list[Monitor]] = Field(default_factory=dict)
    load: Load
    store: StoreConfig = Field(default_factory=StoreConfig)
    schedule: Schedule = Field(default_factory=Schedule)

    @model_validator(mode="after")
    def _hosts_exist(self) -> "Campaign":
        for name in self.hosts:
            if not _NAME.match(name):
                raise ValueError(f"hosts: {name!r} is not a valid host name")
        named = [("load.generators", h) for h in self.load.generators]
        named += [(f"monitors.{h}", h) for h in self.monitors]
        named += [(f"provision.{i}.host", s.host) for i, s in enumerate(self.provision)]
        named += [(f"teardown.{i}.host", s.host) for i, s in enumerate(self.teardown)]
        for where, host in named:
            if host not in self.hosts:
                raise ValueError(f"{where}: no host {host!r} in hosts ({', '.join(self.hosts)})")
        for host in self.load.generators:
            if self.hosts[host].role != "loadgen":
                raise ValueError(f"load.generators: {host!r} has role {self.hosts[host].role}, expected loadgen")
        return self

    @property
    def background_steps(self) -> list[BackgroundStep]:
        return [step for step in self.provision if isinstance(step, BackgroundStep)]


def merge_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Apply overrides such as {"load.duration_s": 5, "load.steps": [{"vus": 1}]} to raw campaign data."""
    merged = yaml.safe_load(yaml.safe_dump(data))
    for dotted, value in overrides.items():
        target = merged
        *parents, last = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    if "load.steps" in overrides:
        merged["load"].pop("ramp", None)
    if "load.ramp" in overrides:
        merged["load"].pop("steps", None)
    return merged


_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def expand_variables(data: Any, variables: dict[str, str], where: str = "") -> Any:
    """Replace `{{name}}` in every string with its value (`repo`, `venv_bin`, `run_id`, `run_dir`, vars)."""
    if isinstance(data, dict):
        return {key: expand_variables(value, variables, f"{where}.{key}".lstrip(".")) for key, value in data.items()}
    if isinstance(data, list):
        return [expand_variables(value, variables, f"{where}.{n}") for n, value in enumerate(data)]
    if isinstance(data, str):
        whole = _VARIABLE.fullmatch(data.strip())
        if whole and whole.group(1) in variables:  # `vus: '{{soak_vus}}'` stays a number
            return yaml.safe_load(variables[whole.group(1)])

        def value(match: re.Match) -> str:
            if match.group(1) not in variables:
                raise CampaignError(f"{where}: unknown variable {{{{{match.group(1)}}}}} (known: {', '.join(sorted(variables))})")
            return variables[match.group(1)]

        return _VARIABLE.sub(value, data)
    return data


def load_campaign(path: Path, overrides: dict[str, Any] | None = None, variables: dict[str, str] | None = None) -> Campaign:
    """Read and validate a campaign file; `overrides` (dotted keys) come from the UI or the command line.

    `variables` fills `{{name}}` placeholders; without them placeholders are left for the run to fill.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CampaignError(f"{path}: no such campaign file") from None
    except yaml.YAMLError as exc:
        raise CampaignError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{path}: expected a mapping at the top level")
    if overrides:
        data = merge_overrides(data, overrides)
    if variables is not None:
        try:
            data = expand_variables(data, {**{str(k): str(v) for k, v in (data.get("vars") or {}).items()}, **variables})
        except CampaignError as exc:
            raise CampaignError(f"{path}: {exc}") from None
    try:
        return Campaign.model_validate(data)
    except ValidationError as exc:
        raise CampaignError(f"{path}: invalid campaign\n{describe_validation_error(exc)}") from None
