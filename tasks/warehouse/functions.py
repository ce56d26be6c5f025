"""Python functions the mart models call: the rules of tasks/bundle/load.py (load level, offered load,
whether a step scales, whether it is a requirement's stated load), one definition for the ramp and the marts.

`tasks.bundle.load.load_level` is what the ramp's stop rule reads; the `capacity` mart must read the same
number from the same load, so the function itself is registered in DuckDB rather than rewritten in SQL.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from tasks.bundle.load import (
    TOOL_KEYS,
    achieved_share,
    load_level,
    load_matches,
    offered_per_s,
    planned_shortfall,
    step_scales,
)


def _load(load_json: str | None) -> dict[str, Any]:
    if not load_json:
        return {}
    try:
        value = json.loads(load_json)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def level_of(load_json: str | None, key: str | None) -> float | None:
    """`load_level` of a load stored as JSON (the `iterations.load` column)."""
    return load_level(_load(load_json), key or None)


def series_of(load_json: str | None, key: str | None) -> str:
    """The load keys that are not part of the load level, as `k=v k=v` (`''` when there are none).

    A key is part of the level when changing its value changes `load_level`; the rest (a message size, a
    payload name) tells apart the series of a campaign that ramps the same load over several of them. The
    load tool's own settings (`TOOL_KEYS`: max_vus) are neither.
    """
    load = _load(load_json)
    level = load_level(load, key or None)

    def moves_level(name: str) -> bool:
        value = load[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return load_level({**load, name: value * 2 + 1}, key or None) != level

    rest = [name for name in sorted(load) if name not in TOOL_KEYS and not moves_level(name)]
    return " ".join(f"{name}={load[name]}" for name in rest)


def matches(load_json: str | None, wanted_json: str | None) -> bool | None:
    """`load_matches` of an iteration's load and a requirement's `at_load`, both as JSON; None without one."""
    return None if wanted_json is None else load_matches(_load(load_json), _load(wanted_json))


def offered_of(load_json: str | None, calls: float | None, dropped: float | None, seconds: float | None) -> float | None:
    """`offered_per_s` of a load stored as JSON."""
    return offered_per_s(_load(load_json), calls, dropped, seconds)


def shortfall_of(load_json: str | None, sent: float | None, seconds: float | None) -> float | None:
    """`planned_shortfall` of a load stored as JSON."""
    return planned_shortfall(_load(load_json), sent, seconds)


def share_of(load_json: str | None, calls: float | None, dropped: float | None) -> float | None:
    """`achieved_share` of a load stored as JSON."""
    return achieved_share(_load(load_json), calls, dropped)


FUNCTIONS = {
    "load_level": (level_of, ["VARCHAR", "VARCHAR"], "DOUBLE"),
    "load_series": (series_of, ["VARCHAR", "VARCHAR"], "VARCHAR"),
    "load_matches": (matches, ["VARCHAR", "VARCHAR"], "BOOLEAN"),
    "offered_per_s": (offered_of, ["VARCHAR", "DOUBLE", "DOUBLE", "DOUBLE"], "DOUBLE"),
    "planned_shortfall": (shortfall_of, ["VARCHAR", "DOUBLE", "DOUBLE"], "DOUBLE"),
    "achieved_share": (share_of, ["VARCHAR", "DOUBLE", "DOUBLE"], "DOUBLE"),
    "step_scales": (step_scales, ["DOUBLE"] * 7, "BOOLEAN"),
}


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Make the load functions (`FUNCTIONS`) callable from SQL under the same names (idempotent).

    They are made together, here only: when the first exists, all do. Asking duckdb_functions() instead
    lists every function DuckDB has (40 ms on each ingest)."""
    for number, (name, (function, arguments, returns)) in enumerate(FUNCTIONS.items()):
        try:
            con.create_function(name, function, arguments, returns, null_handling="special")
        except duckdb.NotImplementedException:  # "already created": by an earlier call on this connection
            if number == 0:
                return
            raise
