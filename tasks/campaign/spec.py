"""Campaign files (`campaigns/*.yaml`): validated at load, with errors that name the file and the key.

A campaign says which hosts make up the stage, how to bring it up and down, what to monitor, how to
raise the load step by step and where to keep the perflog bundle. Secrets are never written here: SSH
keys come from a key file, an environment variable or a Prefect Secret block; S3 credentials from the
AWS chain or a Prefect block.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from tasks.bundle.manifest import (
    MAX_LABELS,
    CapacityOptions,
    HistoryOptions,
    Requirement,
    check_threshold_names,
)
from tasks.bundle.strict import (
    NAME_PATTERN,
    StrictModel,
    describe_validation_error,
    load_yaml,
)
from tasks.campaign.ramp import planned_steps
from tasks.loadtools.config import Load
from tasks.loadtools.registry import tool_kind
from tasks.stage.config import BackgroundStep, Monitor, Step
from tasks.stage.hooks import HOOK_SECTIONS, Hook
from tasks.stage.provision import background_steps
from tasks.stage.shell import quote
from tasks.stage.transport import HostConfig
from tasks.store.base import StoreConfig

_NAME = re.compile(NAME_PATTERN)


class CampaignError(ValueError):
    """A campaign file that cannot be used; the message names the file and the key."""


class Schedule(StrictModel):
    """When the nightly deployment runs."""

    cron: str = "0 2 * * *"
    timezone: str = "UTC"
    active: bool = True


class Campaign(StrictModel):
    """A whole campaign file."""

    campaign: str = Field(pattern=NAME_PATTERN)
    scenario: str = ""
    stage: str = Field(pattern=NAME_PATTERN)
    labels: dict[str, str] = Field(default_factory=dict, max_length=MAX_LABELS)
    timezone: str = "UTC"
    vars: dict[str, str] = Field(default_factory=dict)
    workdir: str = "/tmp/perfcampaign"
    hosts: dict[str, HostConfig] = Field(min_length=1)
    requirements: list[Requirement] = Field(default_factory=list)
    thresholds: dict[str, float] = Field(default_factory=dict)
    capacity: CapacityOptions = Field(default_factory=CapacityOptions)
    history: HistoryOptions = Field(default_factory=HistoryOptions)
    provision: list[Step] = Field(default_factory=list)
    teardown: list[Step] = Field(default_factory=list)
    monitors: dict[str, list[Monitor]] = Field(default_factory=dict)
    load: Load
    before_step: list[Hook] = Field(default_factory=list)  # stage hooks around every load step
    after_step: list[Hook] = Field(default_factory=list)
    store: StoreConfig = Field(default_factory=StoreConfig)
    schedule: Schedule = Field(default_factory=Schedule)

    @field_validator("thresholds", mode="before")
    @classmethod
    def _known_thresholds(cls, value: Any) -> Any:
        return check_threshold_names(value)

    @model_validator(mode="after")
    def _known_tool(self) -> "Campaign":
        tool_kind(self.load.tool)
        return self

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

    @model_validator(mode="after")
    def _hooks_fit(self) -> "Campaign":
        """A hook's host exists, its role has hosts, and every step has the keys its command reads."""
        steps = planned_steps(self.load)
        for section in HOOK_SECTIONS:
            for number, hook in enumerate(getattr(self, section)):
                where = f"{section}.{number}"
                if hook.host is not None and hook.host not in self.hosts:
                    raise ValueError(f"{where}.host: no host {hook.host!r} in hosts ({', '.join(self.hosts)})")
                if hook.role is not None and not any(h.role == hook.role for h in self.hosts.values()):
                    raise ValueError(f"{where}.role: no host has role {hook.role}")
                for key in sorted(hook.step_keys()):
                    if missing := [n for n, step in enumerate(steps, 1) if key not in step]:
                        raise ValueError(f"{where}.run: {{{{step.{key}}}}} but planned step {missing[0]} has no "
                                         f"{key!r} (its keys: {', '.join(steps[missing[0] - 1])})")
        return self

    @property
    def background_steps(self) -> list[BackgroundStep]:
        return background_steps(self.provision)


# What an ad-hoc run (the Prefect form, `--set`) may change: durations, steps, load sizes and the values of
# variables the campaign file declares. Hosts, commands, paths and the store come from the campaign file in
# the repository: whoever can start a flow run must not be able to choose what runs where (docs/security.md).
OVERRIDABLE = ("load.duration_s", "load.pause_s", "load.warmup_s", "load.soak_window_s", "load.steps",
               "load.ramp.start", "load.ramp.start.*",
               "load.ramp.factor", "load.ramp.increment", "load.ramp.max_steps", "vars.*",
               "load.matrix", "load.matrix.*")  # matrix: a step's values, as load.steps


def _overridable(dotted: str, data: dict[str, Any]) -> bool:
    if dotted in OVERRIDABLE:
        return True
    parent, _, name = dotted.rpartition(".")
    if f"{parent}.*" not in OVERRIDABLE:
        return False
    return parent != "vars" or name in (data.get("vars") or {})  # a var's value, not a new placeholder


def merge_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Apply overrides such as {"load.duration_s": 5, "load.steps": [{"vus": 1}]} to raw campaign data.

    Only keys of OVERRIDABLE are accepted; any other raises CampaignError naming it.
    """
    refused = [str(key) for key in overrides if not _overridable(str(key), data)]
    if refused:
        raise CampaignError(
            f"override of {', '.join(refused)} refused: a run may only change {', '.join(OVERRIDABLE)} "
            "(vars: those the campaign file declares); change anything else in the campaign file")
    merged = yaml.safe_load(yaml.safe_dump(data))
    for dotted, value in overrides.items():
        target = merged
        *parents, last = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise CampaignError(f"override {dotted}: {part} is not a mapping in the campaign file")
        target[last] = value
    if "load.steps" in overrides:
        merged["load"].pop("ramp", None)
        merged["load"].pop("matrix", None)
    if "load.ramp" in overrides:
        merged["load"].pop("steps", None)
    return merged


_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# The campaign's own shell snippets: a placeholder inside one expands as one quoted shell word, so a value
# (`workdir: /x/victim stage`, a var with `$(...)`) can never become more words or another command.
SHELL_FIELDS = {("provision", "run"), ("provision", "command"), ("teardown", "run"), ("teardown", "command"),
                ("monitors", "pid_command"), *((section, "run") for section in HOOK_SECTIONS)}


def _as_value(text: str) -> Any:
    """A whole-field placeholder's value as YAML (`vus: '{{soak_vus}}'` stays a number), else as text."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def expand_variables(data: Any, variables: dict[str, str], where: str = "", shell: bool = False) -> Any:
    """Replace `{{name}}` in every string with its value (`repo`, `venv_bin`, `run_id`, `run_dir`, vars).

    Inside a shell snippet (SHELL_FIELDS) each value is shell-quoted: the snippet is trusted, the values not.
    """
    if isinstance(data, dict):
        section = where.split(".", 1)[0]
        return {key: expand_variables(value, variables, f"{where}.{key}".lstrip("."),
                                      shell or (section, key) in SHELL_FIELDS)
                for key, value in data.items()}
    if isinstance(data, list):
        return [expand_variables(value, variables, f"{where}.{n}", shell) for n, value in enumerate(data)]
    if isinstance(data, str):
        whole = _VARIABLE.fullmatch(data.strip())
        if whole and whole.group(1) in variables and not shell:
            return _as_value(variables[whole.group(1)])

        def value(match: re.Match) -> str:
            if match.group(1) == "iteration" and where.split(".", 1)[0] in HOOK_SECTIONS:
                return match.group(0)  # a hook's, filled per step (tasks/stage/hooks.py)
            if match.group(1) not in variables:
                raise CampaignError(f"{where}: unknown variable {{{{{match.group(1)}}}}} (known: {', '.join(sorted(variables))})")
            found = variables[match.group(1)]
            return quote(found) if shell else found

        return _VARIABLE.sub(value, data)
    return data


def load_campaign(path: Path, overrides: dict[str, Any] | None = None, variables: dict[str, str] | None = None) -> Campaign:
    """Read and validate a campaign file; `overrides` (dotted keys) come from the UI or the command line.

    `variables` fills `{{name}}` placeholders; without them placeholders are left for the run to fill.
    """
    path = Path(path)
    try:
        data, lines = load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CampaignError(f"{path}: no such campaign file") from None
    except yaml.YAMLError as exc:
        raise CampaignError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{path}: expected a mapping at the top level")
    if overrides:
        try:
            data = merge_overrides(data, overrides)
        except CampaignError as exc:
            raise CampaignError(f"{path}: {exc}") from None
    if variables is not None:
        try:
            data = expand_variables(data, {**{str(k): str(v) for k, v in (data.get("vars") or {}).items()}, **variables})
        except CampaignError as exc:
            raise CampaignError(f"{path}: {exc}") from None
    try:
        return Campaign.model_validate(data)
    except ValidationError as exc:
        raise CampaignError(f"{path}: invalid campaign\n{describe_validation_error(exc, lines)}") from None
