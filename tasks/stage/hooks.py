"""Stage hooks: commands run on hosts before or after every load step (`before_step` / `after_step`).

A hook names a host or a role (every host of it). Its command is a template rendered once, per step: the
campaign's `{{vars}}` (kept from load time), `{{step.KEY}}` and `{{iteration}}`, each as one quoted shell word.
Every run is recorded, its output written to the bundle, and a hook that fails raises after it is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr, model_validator

from tasks.bundle.hooks import OUTPUT_TAIL_CHARS, HookRun
from tasks.bundle.strict import StrictModel
from tasks.stage.shell import placeholders, render
from tasks.stage.transport import Transport

HOOK_SECTIONS = ("before_step", "after_step")


class Hook(StrictModel):
    """A shell command run on one host, or on every host of a role, around each load step."""

    run: str
    host: str | None = None
    role: Literal["sut", "loadgen", "dependency"] | None = None
    timeout_s: float = Field(120, gt=0)
    # the campaign's variables (vars, run_dir, ...) as loaded: filled with the step's values, in one pass
    _variables: dict[str, str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _where(self) -> "Hook":
        if (self.host is None) == (self.role is None):
            raise ValueError("give exactly one of host or role")
        return self

    def step_keys(self) -> set[str]:
        """The step keys its command reads (`{{step.KEY}}`)."""
        return {name.removeprefix("step.") for name in placeholders(self.run) if name.startswith("step.")}

    def command(self, index: int, step: dict[str, Any]) -> str:
        """The command run for one step."""
        return hook_command(self.run, index, step, self._variables)


class HookFailed(RuntimeError):
    """A hook exited non-zero or could not run: the run stops (and tears down) as for any failure."""


def hook_command(command: str, index: int, step: dict[str, Any], variables: Mapping[str, str] | None = None) -> str:
    """The command with `variables`, the step's values (`{{step.KEY}}`) and `{{iteration}}` in place, each quoted."""
    values = {**(variables or {}), **{f"step.{key}": value for key, value in step.items()}, "iteration": index}
    try:
        return render(command, values, shell=True)
    except KeyError as exc:
        raise HookFailed(f"hook `{command}`: no value for {{{{{exc.args[0]}}}}} at iteration {index}") from None


def run_hooks(when: Literal["before", "after"], hooks: list[Hook], index: int, step: dict[str, Any],
              transports: dict[str, Transport], roles: dict[str, str], bundle: Path, runs: list[HookRun]) -> None:
    """Run every hook in order on its hosts, appending each run to `runs`; the first failure raises."""
    for number, hook in enumerate(hooks):
        hosts = [hook.host] if hook.host else [name for name, role in roles.items() if role == hook.role]
        for host in hosts:
            command = hook.command(index, step)
            started, clock = datetime.now(timezone.utc), time.monotonic()
            try:
                result = transports[host].run(command, timeout_s=hook.timeout_s, check=False)
                exit_code, output = result.exit_code, result.stdout + result.stderr
            except Exception as exc:  # unreachable host, timeout: recorded as a hook that could not run
                exit_code, output = None, f"{type(exc).__name__}: {exc}\n"
            path = f"hooks/{index:04d}-{when}-{number}-{host}.log"
            (bundle / path).parent.mkdir(parents=True, exist_ok=True)
            (bundle / path).write_text(output, encoding="utf-8")
            runs.append(HookRun(iteration=index, when=when, host=host, command=command, exit_code=exit_code,
                                started_at=started, seconds=round(time.monotonic() - clock, 3), output=path,
                                output_tail=output[-OUTPUT_TAIL_CHARS:]))
            if exit_code != 0:
                status = "could not run" if exit_code is None else f"exited with {exit_code}"
                raise HookFailed(f"{when}_step hook {number} on {host} for iteration {index} {status}: "
                                 f"`{command}`; output tail: {output[-500:].strip() or '(empty)'}")
