"""A soak in a campaign run: its target from an earlier run (`load.target_from`), its windows as iterations.

The soak is one load-tool run; its time is cut into equal windows afterwards (tasks/bundle/soak.py), each
an iteration of the manifest, and its result files are left unpinned so their rows fall into the windows
by their times.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from tasks.bundle.manifest import Iteration
from tasks.bundle.soak import Soak, SoakTarget, SoakTargetError, TargetFrom, windows
from tasks.campaign.spec import Campaign, CampaignError

TargetResolver = Callable[[TargetFrom, dict[str, Any]], SoakTarget]  # the warehouse's, passed in by the flow


def soak_of(campaign: Campaign, campaign_file: Path, resolve_target: TargetResolver | None) -> Soak | None:
    """The soak's record: its windows, and the target taken from an earlier run's capacity (None: no soak).
    A target that cannot be found is a CampaignError naming the file."""
    load = campaign.load
    if not (load.soak_window_s or load.target_from):
        return None
    target = None
    if load.target_from:
        if resolve_target is None:
            raise CampaignError(f"{campaign_file}: load.target_from needs a warehouse to read the earlier run from")
        try:
            target = resolve_target(load.target_from, load.steps[0])
        except SoakTargetError as exc:
            raise CampaignError(f"{campaign_file}: {exc}") from None
    return Soak(window_s=load.soak_window_s, target=target)


def window_iterations(index: int, start: datetime, end: datetime, step: dict[str, Any], window_s: float,
                      warmup_s: float) -> list[Iteration]:
    """The soak's windows as iterations index, index + 1, ...; the warm-up is the first window's."""
    def moment(seconds: float) -> datetime:
        at = datetime.fromtimestamp(seconds, timezone.utc)
        return at.replace(microsecond=at.microsecond // 1000 * 1000)  # bundles keep milliseconds

    return [Iteration(index=index + number, start=moment(cut_from), end=moment(cut_to), load=step,
                      warmup_s=warmup_s if number == 0 else 0)
            for number, (cut_from, cut_to) in enumerate(windows(start.timestamp(), end.timestamp(), window_s))]


def unpinned(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A soak's result files without an iteration: they span every window, and their rows go by time."""
    return [{key: value for key, value in source.items() if key != "iteration"} for source in found]
