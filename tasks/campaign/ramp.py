"""Which load step comes next, and when a campaign stops raising the load.

A ramp multiplies (or adds to) one key of its start step until the stop rule fires: the last step no
longer scales (`tasks.bundle.load.step_scales` with the campaign's `capacity` options: the definition of
"saturated" the capacity mart uses too), or a client-side requirement broke, or `max_steps` were run. The
decision uses the load tool's own end-of-step summary; the warehouse later judges every raw row.
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

from tasks.bundle.load import load_level, step_scales
from tasks.bundle.manifest import CapacityOptions, Requirement
from tasks.loadtools.base import StepResult
from tasks.loadtools.config import Load, Ramp

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def ramp_step(ramp: Ramp, number: int) -> dict[str, Any]:
    """The load of step `number` (0 for the start) of a ramp; integers stay integers."""
    start = ramp.start[ramp.key]
    value = start * ramp.factor**number if ramp.factor else start + ramp.increment * number
    step = dict(ramp.start)
    step[ramp.key] = round(value) if isinstance(start, int) else value
    return step


def matrix_series(load: Load) -> list[dict[str, Any]]:
    """Every combination of `load.matrix`, first key outermost (`[{}]` without a matrix)."""
    keys = list(load.matrix or {})
    return [dict(zip(keys, values)) for values in itertools.product(*(load.matrix[key] for key in keys))]


def series_label(load: Load, step: dict[str, Any]) -> str:
    """The matrix series a step belongs to, as `key=value key=value` (as the capacity mart's `series`)."""
    return " ".join(f"{key}={step[key]}" for key in sorted(load.matrix or {}))


def planned_series(load: Load) -> list[list[dict[str, Any]]]:
    """The steps the campaign may run, grouped in the series its stop rule judges one at a time.

    A ramp with a matrix runs the ramp through every combination in turn (a series each, the combination's
    keys first in each step's load); a matrix alone or fixed steps are one series run to its end.
    """
    if load.steps is not None:
        return [[dict(step) for step in load.steps]]
    if load.ramp is None:
        return [matrix_series(load)]
    return [[{**series, **ramp_step(load.ramp, number)} for number in range(load.ramp.max_steps)]
            for series in matrix_series(load)]


def planned_steps(load: Load) -> list[dict[str, Any]]:
    """Every step the campaign may run, in order (a ramp may stop a series before its end)."""
    return [step for series in planned_series(load) for step in series]


def broken_requirement(result: StepResult, requirements: list[Requirement]) -> str | None:
    """The first client-side requirement the step's summary breaks, described, or None.

    The summary covers the whole client side: a scoped requirement (a label, a host, a k6 metric) waits for
    the warehouse, and one stated at another iteration or load is not judged at this step.
    """
    for req in requirements:
        if req.side != "client" or not req.is_whole_side or not req.applies_at(result.index, result.load):
            continue
        if req.min_calls_per_s is not None and result.calls_per_s < req.min_calls_per_s:
            continue
        measured = result.figure(req.metric)
        if measured is not None and not OPS[req.op](measured, req.threshold):
            return f"requirement {req.id} broke at step {result.index}: {req.metric} {measured:.4g}, limit {req.op} {req.threshold:g}"
    return None


def saturation(load: Load, results: list[StepResult], capacity: CapacityOptions) -> str | None:
    """Why the last step is saturated (it does not scale), or None."""
    last = results[-1]
    before = results[-2] if len(results) >= 2 else None
    key = capacity.load_key or (load.ramp.key if load.ramp else None)
    level_before = load_level(before.load, key) if before else None
    level_now = load_level(last.load, key)
    share = last.achieved_share
    scales = step_scales(level_before, level_now, before.calls_per_s if before else None, last.calls_per_s,
                         share, capacity.min_scaling, capacity.min_achieved_ratio)
    if scales is not False:
        return None
    if share is not None and share < capacity.min_achieved_ratio:
        return (f"made {100 * share:.1f} % of the calls offered ({last.calls_per_s:.1f} of "
                f"{last.offered_per_s:.1f} calls/s, {last.dropped} dropped): saturated at step {last.index}")
    throughput_gain = 100 * (last.calls_per_s / before.calls_per_s - 1)
    load_gain = 100 * (level_now / level_before - 1)
    return (f"throughput grew {throughput_gain:.0f} % for {load_gain:.0f} % more {key or 'load'}: "
            f"saturated at step {last.index}")


def stop_reason(load: Load, results: list[StepResult], requirements: list[Requirement],
                capacity: CapacityOptions | None = None) -> str | None:
    """Why the series of `results` (the whole campaign without a matrix) stops after its last one, or None to
    go on: fixed steps run to the end, unless `until_saturated` makes them stop as a ramp does."""
    if load.ramp is None and not load.until_saturated:
        return "all steps run" if len(results) == len(planned_steps(load)) else None
    stop_on_broken = load.ramp.stop.on_requirement_broken if load.ramp else True
    if stop_on_broken and (broken := broken_requirement(results[-1], requirements)):
        return broken
    if saturated := saturation(load, results, capacity or CapacityOptions()):
        return saturated
    if load.ramp is None:
        return "all steps run" if len(results) == len(load.steps) else None
    if len(results) >= load.ramp.max_steps:
        return f"reached max_steps ({load.ramp.max_steps})"
    return None
