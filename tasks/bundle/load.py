"""An iteration's load: its level, its offered rate, whether it is a stated load, and whether a step still
scales. These are the rules the ramp's stop rule and the marts share (the marts call them as DuckDB
functions, tasks/warehouse/functions.py), so the two never disagree on a definition.
"""

from __future__ import annotations

from typing import Any

OFFERED_KEY = "rate_per_s"  # an open-model step's arrival rate (calls the tool starts per second)
# The tool's means to keep a rate (k6's VU pool of an arrival-rate scenario), not a load the service gets: never
# a capacity series of their own ("max_vus=10" is no matrix dimension) and never a load level.
TOOL_KEYS = frozenset({"max_vus", "pre_allocated_vus"})


def _number(load: dict[str, Any], key: str) -> float | None:
    value = load.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_level(load: dict[str, Any], key: str | None = None) -> float | None:
    """One number for a step's load: the named key, else `rate_per_s`, `vus`, `nodes` x `threads`, `users`
    or `threads`."""
    name = load_level_key(load, key)
    if name == NODES_X_THREADS:
        return _number(load, "nodes") * _number(load, "threads")
    return None if name is None else _number(load, name)


NODES_X_THREADS = "nodes x threads"


def load_level_key(load: dict[str, Any], key: str | None = None) -> str | None:
    """What `load_level` reads for this step: the named key, `rate_per_s`, `vus`, `nodes x threads`, `users` or
    `threads` (a chart's axis is named by it); None when the step has none of them."""
    for name in (key, OFFERED_KEY, "vus") if key else (OFFERED_KEY, "vus"):
        if name and _number(load, name) is not None:
            return name
    if _number(load, "nodes") is not None and _number(load, "threads") is not None:
        return NODES_X_THREADS
    return next((name for name in ("users", "threads") if _number(load, name) is not None), None)


def offered_per_s(load: dict[str, Any], calls: float | None, dropped: float | None, seconds: float | None) -> float | None:
    """The load offered to the service: the step's planned arrival rate (`rate_per_s`, open model), else
    what the tool tried to send when it dropped calls ((sent + dropped) / s); None for a closed model."""
    planned = _number(load, OFFERED_KEY)
    if planned is not None:
        return planned
    if dropped and seconds:
        return ((calls or 0) + dropped) / seconds
    return None


def planned_shortfall(load: dict[str, Any], sent: float | None, seconds: float | None) -> float | None:
    """The calls a paced plan (a JMeter throughput timer) meant to send and did not: the step's planned
    `rate_per_s` x `seconds` (rounded) - the calls sent, at least 0; None without a planned rate. A paced plan
    never drops a call (a thread that falls behind sends late), so this is its dropped count; a tool that
    counts its own (k6 dropped_iterations) reports those instead."""
    planned = _number(load, OFFERED_KEY)
    if planned is None or not seconds:
        return None
    return float(max(0, round(planned * seconds) - (sent or 0)))


def achieved_share(load: dict[str, Any], calls: float | None, dropped: float | None) -> float | None:
    """The share of the offered calls that were made, calls / (calls + dropped), for a step that was offered a
    load (a planned `rate_per_s`, or dropped calls); None for a closed model. Counted in calls, not per second,
    so the seconds k6 spends starting and stopping around the load do not count against it."""
    if _number(load, OFFERED_KEY) is None and not dropped:
        return None
    total = (calls or 0) + (dropped or 0)
    return (calls or 0) / total if total else None


def step_scales(
    load_before: float | None, load_now: float | None, achieved_before: float | None, achieved_now: float | None,
    share_now: float | None, min_scaling: float, min_achieved_ratio: float,
) -> bool | None:
    """Whether a step still scales; "saturated" is the first step that does not (docs/report.md, capacity).

    A step offered a load (open model) that made less than `min_achieved_ratio` of the offered calls
    (`achieved_share`) does not scale. Otherwise, set against the previous step: when the load rose, it
    scales when its throughput gain is at least `min_scaling` x its load gain. A step whose load did not rise
    cannot be judged (None), unless it was offered a load, which it then held (True).
    """
    if share_now is not None and share_now < min_achieved_ratio:
        return False
    if not (load_before and load_now and achieved_before and achieved_now is not None) or load_now <= load_before:
        return True if share_now is not None else None
    return achieved_now / achieved_before - 1 >= min_scaling * (load_now / load_before - 1)


def load_matches(load: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether a step's load has every value of `wanted` (a requirement's `at_load`); 10 and 10.0 are equal."""
    return all(key in load and load[key] == value for key, value in wanted.items())
