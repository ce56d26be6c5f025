"""A soak's target from an earlier run (`load.target_from`): share_of_max x the load of its highest throughput.

The flow hands `resolve_soak_target` to the campaign run, which calls it before the stage is touched; the
run used, its maximum and the target are recorded in run.yaml (`soak.target`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tasks.bundle.soak import RATE_KEY, SoakTarget, SoakTargetError, TargetFrom, soak_target_value
from tasks.warehouse.connection import WarehouseError, open_warehouse
from tasks.warehouse.engines import Lake
from tasks.warehouse.models import model_sql, warehouse_has

__all__ = ["SoakTargetError", "resolve_soak_target"]


def _wanted(target_from: TargetFrom) -> str:
    scenario = f", scenario {target_from.scenario!r}" if target_from.scenario else ""
    run = "its latest run" if target_from.run == "latest" else f"run {target_from.run!r}"
    return f"campaign {target_from.campaign!r}{scenario}, {run}, with a measured maximum on the {target_from.side} side"


def _matches(series: str, step: dict[str, Any]) -> bool:
    """Whether the soak's step has every `key=value` of a capacity series (`message_size=1024 payload=small`)."""
    pairs = [part.split("=", 1) for part in series.split()]
    return all(len(pair) == 2 and str(step.get(pair[0])) == pair[1] for pair in pairs)


def _max_level(row: dict[str, Any], target_from: TargetFrom) -> float:
    """The max iteration's value of the key; for `rate_per_s` in a run that had none, the throughput itself
    (calls/s is what a rate is measured in)."""
    value = json.loads(row["load"] or "{}").get(target_from.key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if target_from.key == RATE_KEY:
        return float(row["calls_per_s"])
    raise SoakTargetError(
        f"load.target_from: iteration {row['iteration']} of run {row['run_id']} (its maximum, "
        f"{row['calls_per_s']:.1f} calls/s) has no number {target_from.key!r} in its load {row['load']}: "
        "name the key the earlier run ramped in target_from.key")


def resolve_soak_target(warehouse: Path | Lake, target_from: TargetFrom, step: dict[str, Any]) -> SoakTarget:
    """The target for the soak's step from the warehouse, or SoakTargetError naming what was looked for."""
    params = {"campaign": target_from.campaign, "scenario": target_from.scenario, "run": target_from.run,
              "side": target_from.side}
    try:
        with open_warehouse(warehouse) as con:
            if not warehouse_has(con, "capacity"):
                rows = []
            else:
                cursor = con.execute(model_sql("reports/soak_target"), params)
                columns = [column[0] for column in cursor.description]
                rows = [dict(zip(columns, values)) for values in cursor.fetchall()]
    except WarehouseError as exc:
        raise SoakTargetError(f"load.target_from: {exc}") from None
    if not rows:
        raise SoakTargetError(f"load.target_from: no run of {_wanted(target_from)} in the warehouse {warehouse}")
    matching = [row for row in rows if _matches(row["series"], step)] if len(rows) > 1 else rows
    if len(matching) != 1:
        listed = ", ".join(repr(row["series"]) for row in rows)
        raise SoakTargetError(
            f"load.target_from: run {rows[0]['run_id']} has {len(rows)} capacity series ({listed}) and "
            f"{len(matching)} match the soak's step {step}: give the step the keys of exactly one series")
    row = matching[0]
    level = _max_level(row, target_from)
    return SoakTarget(source=target_from, run_id=row["run_id"], series=row["series"], max_iteration=row["iteration"],
                      max_load=json.loads(row["load"] or "{}"),
                      max_calls_per_s=round(row["calls_per_s"], 3), max_load_level=level,
                      value=soak_target_value(level, target_from.share_of_max))
