"""The campaign's steps as Prefect tasks, each its own task run in the UI with its state, time and logs.

No retries here: provisioning, starting samplers and running load are not safe to repeat blindly. The
closing steps record their problems on the run instead of failing, so every one of them is tried.
"""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run

from tasks.bundle.manifest import PrefectRun, web_url
from tasks.campaign.run import (
    CampaignRun,
    check_hosts,
    collect_files,
    provision_stage,
    record_bundle,
    run_iteration,
    start_all_monitors,
    stop_all_monitors,
    teardown_stage,
)


def prefect_flow_run() -> PrefectRun | None:
    """The flow run this runs in, for run.yaml: its id, and its page in the UI when Prefect knows the UI's URL
    (an ephemeral server has none: Prefect then makes `None/flow-runs/...`, which is left out); None outside one."""
    if flow_run.id is None:
        return None
    return PrefectRun(flow_run_id=flow_run.id, flow_run_url=web_url(flow_run.ui_url))


@task(name="check-hosts", task_run_name="check-hosts", cache_policy=NO_CACHE)
def check_hosts_task(run: CampaignRun) -> None:
    """Connect to every host and check its tools."""
    check_hosts(run)


@task(name="provision", task_run_name="provision", cache_policy=NO_CACHE)
def provision_task(run: CampaignRun) -> None:
    """Bring the stage up: uploads, commands, the service, health waits, background load."""
    provision_stage(run)


@task(name="start-monitors", task_run_name="start-monitors", cache_policy=NO_CACHE)
def start_monitors_task(run: CampaignRun) -> None:
    """Start vmstat, jstat and docker stats samplers on every host."""
    start_all_monitors(run)


@task(name="iteration", task_run_name="iteration-{index}", cache_policy=NO_CACHE)
def iteration_task(run: CampaignRun, index: int, step: dict[str, Any]) -> float:
    """One load step on all its generators; returns its throughput (calls/s, from the tool's summary)."""
    return run_iteration(run, index, step).calls_per_s


@task(name="stop-monitors", task_run_name="stop-monitors", cache_policy=NO_CACHE)
def stop_monitors_task(run: CampaignRun) -> None:
    """Stop the samplers and background processes so their files are complete."""
    stop_all_monitors(run)


@task(name="collect", task_run_name="collect", cache_policy=NO_CACHE)
def collect_task(run: CampaignRun) -> None:
    """Copy the monitors' and background processes' files into the bundle (SFTP resumes on its own)."""
    collect_files(run)


@task(name="teardown", task_run_name="teardown", cache_policy=NO_CACHE)
def teardown_task(run: CampaignRun) -> None:
    """Run every teardown step, whatever happened before."""
    teardown_stage(run)


@task(name="write-bundle", task_run_name="write-bundle", cache_policy=NO_CACHE)
def bundle_task(run: CampaignRun) -> str:
    """Write the bundle's run.yaml from the typed manifest; returns the bundle folder."""
    return str(record_bundle(run))
