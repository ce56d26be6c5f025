"""Campaign files (`campaigns/*.yaml`): validated at load, with errors that name the file and the key.

A campaign says which hosts make up the stage, how to bring it up and down, what to monitor, how to
raise the load step by step and where to keep the perflog bundle. Secrets are never written here: SSH
keys come from a key file, an environment variable or a Prefect Secret block; S3 credentials from the
AWS chain or a Prefect block.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from tasks.bundle.manifest import (
    MAX_LABELS,
    CapacityOptions,
    HistoryOptions,
    PercentileMethod,
    Requirement,
    check_threshold_names,
)
from tasks.bundle.strict import (
    NAME_PATTERN,
    StrictModel,
    describe_validation_error,
    load_yaml,
)
from tasks.campaign.overrides import (
    OverrideError,
    apply_overrides,
    checked_overrides,
    kind_of,
    override_problems,
)
from tasks.campaign.ramp import planned_steps
from tasks.loadtools.config import Load
from tasks.loadtools.registry import tool_kind
from tasks.stage.config import BackgroundStep, Monitor, Step
from tasks.stage.hooks import HOOK_SECTIONS, Hook
from tasks.stage.provision import background_steps
from tasks.stage.shell import PLACEHOLDER, placeholders, render
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
    workdir: str | None = None  # default: a folder of the run's own (run_dir)
    hosts: dict[str, HostConfig] = Field(min_length=1)
    requirements: list[Requirement] = Field(default_factory=list)
    thresholds: dict[str, float] = Field(default_factory=dict)
    percentile_method: PercentileMethod = "linear"  # its runs' (docs/bundle-format.md)
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

    def run_dir(self, run_id: str) -> str:
        """The run's folder on every host: `<workdir>/<run_id>`, or `/tmp/perfcampaign-<run_id>-<random>` when the
        file pins no workdir, so runs of two people (even started in the same second) never share a folder."""
        if self.workdir:
            return f"{self.workdir.rstrip('/')}/{run_id}"
        return f"/tmp/perfcampaign-{run_id}-{secrets.token_hex(4)}"


# The campaign's own shell snippets: a placeholder inside one expands as one quoted shell word, so a value
# (`workdir: /x/victim stage`, a var with `$(...)`) can never become more words or another command.
SHELL_FIELDS = {("provision", "run"), ("provision", "command"), ("teardown", "run"), ("teardown", "command"),
                ("monitors", "pid_command")}
# A hook's command is rendered per step, all its placeholders at once (tasks/stage/hooks.py): here only checked.
STEP_FIELDS = {(section, "run") for section in HOOK_SECTIONS}


def _as_value(text: str) -> Any:
    """A whole-field placeholder's value: a number when the text is one and reads back the same (`vus:
    '{{soak_vus}}'`), else the text as it is (never YAML: `yes` or `0x10` would come out as another value)."""
    kind = kind_of(text)
    value = int(text) if kind == "int" else float(text) if kind == "number" else text
    return value if str(value) == text else text


def _field_kind(section: str, key: str) -> str:
    return "shell" if (section, key) in SHELL_FIELDS else "step" if (section, key) in STEP_FIELDS else ""


def expand_variables(data: Any, variables: dict[str, str], where: str = "", kind: str = "") -> Any:
    """Replace `{{name}}` in every string with its value (`repo`, `venv_bin`, `run_id`, `run_dir`, vars), once.

    Inside a shell snippet (SHELL_FIELDS) each value is shell-quoted: the snippet is trusted, the values not.
    A hook's command (STEP_FIELDS) is left whole for its step and only checked for unknown names.
    """
    if isinstance(data, dict):
        section = where.split(".", 1)[0]
        return {key: value if not where and key == "vars" else  # the values themselves: data, never templates
                expand_variables(value, variables, f"{where}.{key}".lstrip("."), kind or _field_kind(section, key))
                for key, value in data.items()}
    if isinstance(data, list):
        return [expand_variables(value, variables, f"{where}.{n}", kind) for n, value in enumerate(data)]
    if not isinstance(data, str):
        return data
    if kind == "step":
        names = {name for name in placeholders(data) if not name.startswith("step.")} - {"iteration"}
        _known(names, variables, where)
        return data
    whole = PLACEHOLDER.fullmatch(data.strip())
    if whole and whole.group(1) in variables and kind != "shell":
        return _as_value(variables[whole.group(1)])
    _known(set(placeholders(data)), variables, where)
    return render(data, variables, shell=kind == "shell")


def _known(names: set[str], variables: dict[str, str], where: str) -> None:
    if unknown := sorted(names - set(variables)):
        raise CampaignError(f"{where}: unknown variable {{{{{unknown[0]}}}}} (known: {', '.join(sorted(variables))})")


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
    try:
        values = checked_overrides(data, overrides or {})
        if variables is not None:  # the file's templates rendered once; the override values go in after, as data
            declared = {**(data.get("vars") or {}), **{k[5:]: v for k, v in values.items() if k.startswith("vars.")}}
            variables = {**{str(k): str(v) for k, v in declared.items()}, **variables}
            data = expand_variables(data, variables)
        data = apply_overrides(data, values)
    except OverrideError as exc:
        raise CampaignError(str(exc)) from None  # in the user's words: the --set, not the file's lines
    except CampaignError as exc:
        raise CampaignError(f"{path}: {exc}") from None
    try:
        campaign = Campaign.model_validate(data)
    except ValidationError as exc:
        if problems := override_problems(exc, overrides or {}):
            raise CampaignError("\n".join(problems)) from None
        raise CampaignError(f"{path}: invalid campaign\n{describe_validation_error(exc, lines)}") from None
    for hook in (*campaign.before_step, *campaign.after_step):
        hook._variables = dict(variables or {})  # its command is rendered per step, with these
    return campaign
