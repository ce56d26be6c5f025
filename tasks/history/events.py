"""One event per shift: the change points of many series at one run, grouped.

A shift of the system moves many series at once (every host, iteration, label and percentile of a side):
54 change points for one slower build. A person triages it once and a notification says it once, so the
change points of one campaign, scenario and plan, of one kind and direction, at one run or the runs next
to it, are one event. The run where most series moved is the event's run; the change points one run
either side of it (a series may settle a night early or late) are in it; what is left forms the next
events the same way.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

GROUP = ("scenario", "plan_id", "kind", "direction")


def event_id(campaign: str, group: tuple, run_id: str) -> str:
    """The id of an event: the same group and run give the same id in every analysis."""
    text = "\x1f".join([campaign, *(str(part) for part in group), run_id, "event"])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def group_events(campaign: str, rows: list[dict[str, Any]], position: dict[tuple, int]) -> None:
    """Set each change point's `event_id`. `position`: (scenario, plan_id, run_id) -> the run's place in its
    plan's runs, oldest first (runs next to each other differ by one, whichever series they are in)."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[name] for name in GROUP), []).append(row)
    for group, members in groups.items():
        place = {id(row): position[row["scenario"], row["plan_id"], row["run_id"]] for row in members}
        left = members
        while left:
            counts = Counter(place[id(row)] for row in left)
            # the run where most series moved; on a tie the earliest (the first night at the new level)
            anchor = min(counts, key=lambda at: (-counts[at], at))
            run_id = next(row["run_id"] for row in left if place[id(row)] == anchor)
            identifier = event_id(campaign, group, run_id)
            for row in left:
                if abs(place[id(row)] - anchor) <= 1:
                    row["event_id"] = identifier
            left = [row for row in left if "event_id" not in row]
