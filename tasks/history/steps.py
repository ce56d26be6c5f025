"""The history as a Prefect task: re-analyse the run's campaign; announce each new regression.

A new regression (a change of level, untriaged, first found by this run's analysis) becomes a row of a
table artifact and a Prefect event `perfcampaign.regression` whose payload is the change, so that a Prefect
Automation can notify (docs/history.md has the recipe).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.events import emit_event

from tasks.history.analysis import HistoryOutcome, analyse_run
from tasks.warehouse.connection import warehouse_path
from tasks.settings import artifact_key

REGRESSION_EVENT = "perfcampaign.regression"


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime | date) else value


def event_of(change: dict[str, Any]) -> dict[str, Any]:
    """The arguments of `emit_event` for one new regression: the change is the resource and the payload."""
    series = f"{change['side']} {change['host']} it {change['iteration']} {change['label']} {change['metric']}"
    return {
        "event": REGRESSION_EVENT,
        "resource": {"prefect.resource.id": f"perfcampaign.change.{change['change_id']}",
                     "prefect.resource.name": f"{change['campaign']} {series}"},
        "related": [{"prefect.resource.id": f"perfcampaign.run.{change['run_id']}", "prefect.resource.role": "run"},
                    {"prefect.resource.id": f"perfcampaign.campaign.{change['campaign']}",
                     "prefect.resource.role": "campaign"}],
        "payload": {key: _plain(value) for key, value in change.items()},
    }


@task(name="history", task_run_name="history", cache_policy=NO_CACHE)
def history_task(run_id: str, warehouse: str | None = None) -> HistoryOutcome:
    """Re-analyse the campaign of `run_id`; a table artifact and an event per new regression."""
    outcome = analyse_run(warehouse_path(warehouse), run_id)
    print(outcome.line())
    if outcome.new_regressions:
        create_table_artifact(key=artifact_key("regressions", outcome.campaign),
                              table=[{k: _plain(v) for k, v in change.items()} for change in outcome.new_regressions],
                              description=f"new regressions of {outcome.campaign} found after {run_id}")
        for change in outcome.new_regressions:
            emit_event(**event_of(change))
    return outcome
