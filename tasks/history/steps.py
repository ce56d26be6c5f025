"""The history as a Prefect task: re-analyse the run's campaign; announce each new regression event.

A new regression (a shift of level, untriaged, first found by this run's analysis; one event however many
series it moved) becomes a row of a table artifact and a Prefect event `perfcampaign.regression` whose
payload is the event with its series, so that a Prefect Automation can notify (docs/history.md has the recipe).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.events import emit_event

from tasks.bundle.printable import say
from tasks.history.analysis import HistoryOutcome, analyse_run
from tasks.warehouse.connection import warehouse_path
from tasks.settings import artifact_key

REGRESSION_EVENT = "perfcampaign.regression"


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime | date) else value


def event_of(change: dict[str, Any]) -> dict[str, Any]:
    """The arguments of `emit_event` for one new regression event: the event is the resource, its columns
    (with `series_keys`, the series it moved) the payload."""
    return {
        "event": REGRESSION_EVENT,
        "resource": {"prefect.resource.id": f"perfcampaign.event.{change['event_id']}",
                     "prefect.resource.name": f"{change['campaign']} {change['series']} series ({change['sides']}: "
                                              f"{change['metrics']}) at {change['run_id']}"},
        "related": [{"prefect.resource.id": f"perfcampaign.run.{change['run_id']}", "prefect.resource.role": "run"},
                    {"prefect.resource.id": f"perfcampaign.campaign.{change['campaign']}",
                     "prefect.resource.role": "campaign"}],
        "payload": {key: _plain(value) for key, value in change.items()},
    }


@task(name="history", task_run_name="history", cache_policy=NO_CACHE)
def history_task(run_id: str, warehouse: str | None = None) -> HistoryOutcome:
    """Re-analyse the campaign of `run_id`; a table artifact and an event per new regression event."""
    outcome = analyse_run(warehouse_path(warehouse), run_id)
    say(outcome.line(), err=False)
    if outcome.new_regressions:
        create_table_artifact(key=artifact_key("regressions", outcome.campaign),
                              table=[{k: _plain(v) for k, v in change.items() if k != "series_keys"}
                                     for change in outcome.new_regressions],
                              description=f"new regressions of {outcome.campaign} found after {run_id}")
        for change in outcome.new_regressions:
            emit_event(**event_of(change))
    return outcome
