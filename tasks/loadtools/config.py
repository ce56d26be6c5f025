"""The load's part of a campaign file: the tool, its script, the generators, fixed steps or a ramp."""

from __future__ import annotations

import re
from typing import Union

from pydantic import Field, model_validator

from tasks.bundle.soak import TargetFrom
from tasks.bundle.strict import StrictModel


Scalar = Union[bool, int, float, str]  # a matrix value: what a step key holds
STEP_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")  # `{{step.KEY}}`, a k6 `-e` name, a JMeter property
RESERVED_KEYS = ("duration", "duration_s")  # set by the tool from load.duration_s


class StopRule(StrictModel):
    """When a ramp stops besides saturation (the campaign's `capacity` rule, as the capacity mart judges it)."""

    on_requirement_broken: bool = True


class Ramp(StrictModel):
    """Load steps generated from a start: multiply (`factor`) or add (`increment`) one key each step."""

    start: dict[str, Scalar]
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


class Load(StrictModel):
    """The load tool, its script or plan, the generators and the iterations."""

    tool: str  # a name of tasks/loadtools/registry.py's TOOLS (checked with the campaign)
    binary: str | None = None  # default: `k6` or `jmeter` on the generator's PATH
    script: str
    generators: list[str] = Field(min_length=1)
    duration_s: float = Field(gt=0)
    pause_s: float = Field(0, ge=0)
    warmup_s: float = Field(0, ge=0)  # the first seconds of every iteration, left out of its statistics
    env: dict[str, str | int | float] = Field(default_factory=dict)  # a whole `{{var}}` value arrives as a number
    steps: list[dict[str, Scalar]] | None = None
    # steps that stop as a ramp does: at the first saturated step or broken requirement (a step ramp of
    # several keys, e.g. nodes x threads, that one ramp key cannot describe)
    until_saturated: bool = False
    ramp: Ramp | None = None
    # Matrix steps (docs/campaign-format.md "Matrix"): every combination of the values, first key outermost;
    # alone, each combination is one step; with a ramp, each combination is a series the ramp runs through.
    matrix: dict[str, list[Scalar]] | None = None
    # soak (docs/campaign-format.md "Soak"): one step cut into windows, its load maybe from an earlier run
    soak_window_s: float | None = Field(default=None, gt=0)
    target_from: TargetFrom | None = None

    @model_validator(mode="after")
    def _steps_or_ramp(self) -> "Load":
        if (self.steps is None) == (self.ramp is None and self.matrix is None):
            raise ValueError("give exactly one of steps (a list), ramp or matrix (a ramp may come with a matrix)")
        if self.steps is not None and not self.steps:
            raise ValueError("steps is empty")
        if self.until_saturated and self.steps is None:
            raise ValueError("until_saturated is for steps: a ramp always stops when saturated")
        for key, values in (self.matrix or {}).items():
            if not values:
                raise ValueError(f"matrix.{key} is empty")
            if self.ramp is not None and key in self.ramp.start:
                raise ValueError(f"matrix.{key} is also in ramp.start: give its values in one place")
        if (self.soak_window_s or self.target_from) and (self.steps is None or len(self.steps) != 1):
            raise ValueError("a soak (soak_window_s, target_from) is one step: give steps with exactly one step")
        if self.soak_window_s and self.soak_window_s > self.duration_s:
            raise ValueError(f"soak_window_s {self.soak_window_s:g} is longer than duration_s {self.duration_s:g}")
        if self.soak_window_s and self.warmup_s >= self.soak_window_s:
            raise ValueError(f"warmup_s {self.warmup_s:g} must be shorter than soak_window_s (it is the first window's)")
        return self

    @model_validator(mode="after")
    def _step_keys_stay_in_the_step(self) -> "Load":
        """A step key names a step value only: it cannot replace `env` (where the load goes) or the duration.

        k6 gets both as `-e NAME=value` upper-cased, JMeter as `-Jname=value`: `targets` would be `TARGETS`.
        """
        keys = {key for step in (self.steps or []) for key in step}
        keys |= set(self.ramp.start if self.ramp else ()) | set(self.matrix or ())
        keys |= {self.target_from.key} if self.target_from else set()
        env = {name.lower(): name for name in self.env}
        for key in sorted(keys):
            if not STEP_KEY.match(key):
                raise ValueError(f"step key {key!r}: expected a name of letters, digits and _ (not starting with a digit)")
            if key.lower() in env:
                raise ValueError(f"step key {key!r} would replace load.env.{env[key.lower()]}: a step cannot change "
                                 "the load's env or target")
            if key.lower() in RESERVED_KEYS:
                raise ValueError(f"step key {key!r} would replace the load's duration: set load.duration_s")
        return self
