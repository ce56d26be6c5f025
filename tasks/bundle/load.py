"""An iteration's load as one number, and whether it is a stated load: rules the ramp and the marts share."""

from __future__ import annotations

from typing import Any


def load_level(load: dict[str, Any], key: str | None = None) -> float | None:
    """One number for a step's load: the named key, else `vus`, `nodes` x `threads`, `users` or `threads`."""
    if key and isinstance(load.get(key), int | float):
        return float(load[key])
    if isinstance(load.get("vus"), int | float):
        return float(load["vus"])
    if isinstance(load.get("nodes"), int | float) and isinstance(load.get("threads"), int | float):
        return float(load["nodes"] * load["threads"])
    for name in ("users", "threads"):
        if isinstance(load.get(name), int | float):
            return float(load[name])
    return None


def load_matches(load: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether a step's load has every value of `wanted` (a requirement's `at_load`); 10 and 10.0 are equal."""
    return all(key in load and load[key] == value for key, value in wanted.items())
