"""Stage hooks: commands run on hosts before or after every load step (`before_step` / `after_step`).

A hook names a host or a role (every host of it). `{{step.KEY}}` and `{{iteration}}` in its command are
filled per step, each as one quoted shell word; the campaign's own `{{vars}}` are filled at load time.
Every run is recorded, its output written to the bundle, and a hook that fails raises after it is recorded.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from tasks.bundle.hooks import OUTPUT_TAIL_CHARS, HookRun
from tasks.bundle.strict import StrictModel
from tasks.stage.shell import quote
from tasks.stage.transport import Transport

STEP_PLACEHOLDER = re.compile(r"\{\{\s*(?:step\.([A-Za-z_][A-Za-z0-9_]*)|(iteration))\s*\}\}")
HOOK_SECTIONS = ("before_step", "after_step")


class Hook(StrictModel):
    """A shell command run on one host, or on every host of a role, around each load step."""

    run: str
    host: str | None = None
    role: Literal["sut", "loadgen", "dependency"] | None = None
    timeout_s: float = Field(120, gt=0)

    @model_validator(mode="after")
    def _where(self) -> "Hook":
        if (self.host is None) == (self.role is None):
            raise ValueError("give exactly one of host or role")
        return self

    def step_keys(self) -> set[str]:
        """The step keys its command reads (`{{step.KEY}}`)."""
        return {m.group(1) for m in STEP_PLACEHOLDER.finditer(self.run) if m.group(1)}


class HookFailed(RuntimeError):
    """A hook exited non-zero or could not run: the run stops (and tears down) as for any failure."""


def hook_command(command: str, index: int, step: dict[str, Any]) -> str:
    """The command with the step's values in place of `{{step.KEY}}` and `{{iteration}}`, each quoted."""
    def value(match: re.Match) -> str:
        return quote(str(index if match.group(2) else step[match.group(1)]))

    return STEP_PLACEHOLDER.sub(value, command)


def run_hooks(when: Literal["before", "after"], hooks: list[Hook], index: int, step: dict[str, Any],
              transports: dict[str, Transport], roles: dict[str, str], bundle: Path, runs: list[HookRun]) -> None:
    """Run every hook in order on its hosts, appending each run to `runs`; the first failure raises."""
    for number, hook in enumerate(hooks):
        hosts = [hook.host] if hook.host else [name for name, role in roles.items() if role == hook.role]
        for host in hosts:
            command = hook_command(hook.run, index, step)
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
