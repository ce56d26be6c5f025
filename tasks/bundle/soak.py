"""A soak in the contract: where its target came from (`load.target_from`) and the windows it is cut into.

A soak is one long load step. The campaign runs it as one load-tool run and records it as equal time
windows, one iteration each (`load.soak_window_s`), so every per-iteration mart describes the soak over
time and the `soak_drift` mart fits a trend through the windows (docs/campaign-format.md "Soak").
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tasks.bundle.strict import NAME_PATTERN, StrictModel

class SoakTargetError(ValueError):
    """No earlier run, or none that says which load a soak should run at; the message says what was looked for."""


RATE_KEY = "rate_per_s"  # an arrival rate is in calls/s: a share of the peak throughput when the peak run has none


class TargetFrom(StrictModel):
    """Where a soak's load comes from: a share of the highest throughput an earlier run's `capacity` found."""

    campaign: str = Field(pattern=NAME_PATTERN)
    scenario: str | None = None  # default: any scenario of the campaign
    run: str = Field("latest", pattern=r"^[A-Za-z0-9._-]{1,128}$")  # `latest`, or a run_id
    share_of_max: float = Field(gt=0, le=1)
    key: str = "vus"  # the soak step's key that gets the target
    side: str = Field("client", pattern=r"^(client|server)$")  # whose throughput picks the maximum


class SoakTarget(StrictModel):
    """The run a soak's target was taken from, its maximum and the target computed from it (in run.yaml)."""

    source: TargetFrom
    run_id: str
    series: str  # the capacity series (load keys besides the level) the maximum was taken in; '' for one
    max_iteration: int
    max_load: dict[str, Any] = Field(default_factory=dict)  # that iteration's load, as its run recorded it
    max_calls_per_s: float
    max_load_level: float  # the max iteration's value of `source.key` (its calls/s for rate_per_s without one)
    value: int  # share_of_max x max_load_level, rounded (see soak_target_value)


class Soak(StrictModel):
    """A soak's record in run.yaml: its window length and, when the load came from an earlier run, the target."""

    window_s: float | None = Field(default=None, gt=0)  # None: one iteration (a target without windows)
    target: SoakTarget | None = None


def soak_target_value(max_level: float, share: float) -> int:
    """share x max_level rounded to a whole number, at least 1: load tools take whole VUs, threads, nodes and
    calls per second (k6 refuses a rate of 29.8)."""
    return max(1, round(max_level * share))


def windows(start_s: float, end_s: float, window_s: float) -> list[tuple[float, float]]:
    """Cut [start_s, end_s) into equal windows as close to `window_s` long as the span allows (at least one),
    so no window is a short remainder that weighs as much in a trend as a full one."""
    count = max(1, round((end_s - start_s) / window_s))
    length = (end_s - start_s) / count
    return [(start_s + n * length, end_s if n == count - 1 else start_s + (n + 1) * length) for n in range(count)]


def step_with_target(step: dict[str, Any], target: SoakTarget) -> dict[str, Any]:
    """The soak's step with the target set on its key."""
    return {**step, target.source.key: target.value}
