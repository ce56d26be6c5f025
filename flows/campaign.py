"""Prefect flow: run a whole campaign — provision, monitor, iterate, collect, store, ingest, always tear down."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    update_progress_artifact,
)
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel, Field

from tasks.campaign.locks import stage_lock
from tasks.campaign.ramp import planned_steps, stop_reason
from tasks.campaign.run import (
    CampaignRun,
    check_hosts,
    finish,
    mark_failed,
    open_run,
    provision_stage,
    run_iteration,
    start_all_monitors,
)
from tasks.publish import store_and_ingest
from tasks.settings import WORK_DIR

_ACTIVE: dict[str, CampaignRun] = {}


class RunOverrides(BaseModel):
    """What the Prefect UI form may change for one run (empty fields keep the campaign file's value)."""

    duration_s: float | None = Field(default=None, gt=0, description="seconds per iteration")
    pause_s: float | None = Field(default=None, ge=0, description="seconds between iterations")
    steps: list[dict[str, Any]] | None = Field(default=None, description='fixed steps, e.g. [{"vus": 10}, {"vus": 20}]')
    max_steps: int | None = Field(default=None, ge=1, description="ramp: at most this many steps")
    extra: dict[str, Any] = Field(default_factory=dict, description="any campaign key, dotted: {'vars.port': '8080'}")

    def dotted(self) -> dict[str, Any]:
        """The overrides as dotted campaign keys."""
        named = {"load.duration_s": self.duration_s, "load.pause_s": self.pause_s, "load.steps": self.steps,
                 "load.ramp.max_steps": self.max_steps}
        return {**{k: v for k, v in named.items() if v is not None}, **self.extra}  # the run of this process, for the cancellation hook


@task(name="check-hosts", cache_policy=NO_CACHE)
def check_hosts_task(run: CampaignRun) -> None:
    """Connect to every host and check its tools."""
    check_hosts(run)


@task(name="provision", cache_policy=NO_CACHE)
def provision_task(run: CampaignRun) -> None:
    """Bring the stage up: uploads, commands, the service, health waits, background load."""
    provision_stage(run)


@task(name="start-monitors", cache_policy=NO_CACHE)
def monitors_task(run: CampaignRun) -> None:
    """Start vmstat, jstat and docker stats samplers on every host."""
    start_all_monitors(run)


@task(name="iteration", task_run_name="iteration-{index}", cache_policy=NO_CACHE)
def iteration_task(run: CampaignRun, index: int, step: dict[str, Any]) -> float:
    """One load step on all its generators; returns its throughput (calls/s, from the tool's summary)."""
    return run_iteration(run, index, step).calls_per_s


def _teardown_on_cancel(flow, flow_run, state) -> None:
    """Cancellation from the UI: the flow body's finally may not get far enough; tear down from here."""
    run = _ACTIVE.get(str(flow_run.id))
    if run is not None and not run.finished:
        mark_failed(run, KeyboardInterrupt("cancelled from the Prefect UI"))
        finish(run)


@flow(name="campaign", on_cancellation=[_teardown_on_cancel], log_prints=True)
def campaign_flow(
    campaign_file: str = "campaigns/demo.yaml",
    overrides: RunOverrides | None = None,
    warehouse: str | None = None,
    work_dir: str = WORK_DIR,
) -> str:
    """Run one campaign end to end and return its run_id; the bundle is stored and ingested even on failure."""
    from prefect.runtime import flow_run

    logger = get_run_logger()
    run = open_run(Path(campaign_file), Path(work_dir), (overrides or RunOverrides()).dotted())
    _ACTIVE[str(flow_run.id)] = run
    logger.info("run %s: bundle in %s", run.run_id, run.bundle)
    steps = planned_steps(run.campaign.load)
    progress = create_progress_artifact(0.0, key=f"campaign-{run.campaign.campaign}".lower(), description=run.run_id)
    try:
        with stage_lock(run.campaign.stage):
            check_hosts_task(run)
            provision_task(run)
            monitors_task(run)
            for index, step in enumerate(steps, start=1):
                if index > 1:
                    time.sleep(run.campaign.load.pause_s)
                calls_per_s = iteration_task(run, index, step)
                logger.info("iteration %d %s: %.1f calls/s", index, step, calls_per_s)
                update_progress_artifact(progress, 100.0 * index / len(steps))
                run.stop_reason = stop_reason(run.campaign.load, run.results, run.campaign.requirements)
                if run.stop_reason:
                    logger.info("stopping: %s", run.stop_reason)
                    break
    except BaseException as exc:
        mark_failed(run, exc)
        raise
    finally:
        finish(run)
        report = store_and_ingest(run, warehouse)
        update_progress_artifact(progress, 100.0)
        create_markdown_artifact(key=f"run-{run.campaign.campaign}".lower(), markdown=report,
                                 description=f"campaign run {run.run_id}")
        _ACTIVE.pop(str(flow_run.id), None)
    return run.run_id
