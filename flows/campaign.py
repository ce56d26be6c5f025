"""Prefect flow: run a whole campaign — provision, monitor, iterate, collect, store, ingest, always tear down.

Every step is a task run of its own in the UI. The closing steps run whatever happened (`finally`), and
`finish` then does what a cancelled flow could not get to, so the stage is always torn down and the
bundle always written.
"""

from __future__ import annotations

import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    update_progress_artifact,
)
from pydantic import BaseModel, Field

from tasks.bundle.printable import say
from tasks.campaign.locks import stage_lock
from tasks.campaign.ramp import planned_series, series_label, stop_reason
from tasks.campaign.run import CampaignRun, finish, mark_failed, open_run
from tasks.campaign.steps import (
    bundle_task,
    check_hosts_task,
    collect_task,
    iteration_task,
    prefect_flow_run,
    provision_task,
    start_monitors_task,
    stop_monitors_task,
    teardown_task,
)
from tasks.history.steps import history_task
from tasks.report.charts import import_matplotlib
from tasks.report.fmt import markdown_safe
from tasks.report.steps import report_task
from tasks.site.steps import site_task
from tasks.settings import WORK_DIR, artifact_key
from tasks.stage.transport import StageError
from tasks.store.steps import store_bundle_task
from tasks.validate.gx import prepare_context
from tasks.validate.steps import validate_task
from tasks.warehouse.connection import warehouse_path
from tasks.warehouse.soak_target import resolve_soak_target
from tasks.warehouse.steps import ingest_task
from tasks.warehouse.verdicts import verdicts_markdown

WARM_UP_SWITCH_S = 0.0005  # the GIL's switch interval while the warm-up thread runs (Python's default: 5 ms)
WARM_UP_WAIT_S = 60.0  # the longest the first iteration waits for the warm-up (2-3 s of CPU on a quiet machine)
_ACTIVE: dict[str, CampaignRun] = {}  # the run of this process, for the cancellation hook


class RunOverrides(BaseModel):
    """What the Prefect UI form may change for one run (empty fields keep the campaign file's value)."""

    duration_s: float | None = Field(default=None, gt=0, description="seconds per iteration")
    pause_s: float | None = Field(default=None, ge=0, description="seconds between iterations")
    steps: list[dict[str, Any]] | None = Field(default=None, description='fixed steps, e.g. [{"vus": 10}, {"vus": 20}]')
    max_steps: int | None = Field(default=None, ge=1, description="ramp: at most this many steps")
    extra: dict[str, Any] = Field(default_factory=dict, description="more dotted keys of the allow-list "
                                  "(tasks/campaign/overrides.py OVERRIDABLE: durations, steps, ramp, declared vars; "
                                  "each value of its type, docs/security.md), "
                                  "e.g. {'vars.port': '8080'}; hosts, commands and the store come from the file")

    def dotted(self) -> dict[str, Any]:
        """The overrides as dotted campaign keys."""
        named = {"load.duration_s": self.duration_s, "load.pause_s": self.pause_s, "load.steps": self.steps,
                 "load.ramp.max_steps": self.max_steps}
        return {**{k: v for k, v in named.items() if v is not None}, **self.extra}


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

    soak_target = partial(resolve_soak_target, warehouse_path(warehouse))  # a soak's load.target_from
    run = open_run(Path(campaign_file), Path(work_dir), (overrides or RunOverrides()).dotted(), soak_target)
    _ACTIVE[str(flow_run.id)] = run
    run.prefect = prefect_flow_run()  # run.yaml links the flow run
    get_run_logger().info("run %s: bundle in %s", run.run_id, run.bundle)
    progress = create_progress_artifact(0.0, key=artifact_key("campaign", run.campaign.campaign), description=run.run_id)
    warm_up = warm_up_publishing()
    try:
        with stage_lock(run.campaign.stage):
            check_hosts_task(run)
            provision_task(run)
            start_monitors_task(run)
            warm_up.join(WARM_UP_WAIT_S)  # the load does not share the controller with the warm-up's imports
            run_iterations(run, progress)
    except BaseException as exc:
        mark_failed(run, exc)
        raise
    finally:
        close_stage(run)
        publish(run, warehouse, work_dir)
        update_progress_artifact(progress, 100.0)
        _ACTIVE.pop(str(flow_run.id), None)
    if run.status != "completed":  # found while closing (a service that died after the last check): the flow fails too
        raise StageError(f"run {run.run_id} {run.status}: {run.status_reason}")
    return run.run_id


def run_iterations(run: CampaignRun, progress) -> None:
    """The planned steps in order, series by series: a series ends when the ramp's stop rule says its load
    stopped paying off, and the next series (a matrix combination) starts from the ramp's start again."""
    series = planned_series(run.campaign.load)
    planned = sum(len(steps) for steps in series)
    index, reasons = 0, []
    for steps in series:
        first = index
        for step in steps:
            index += 1
            if index > 1:
                time.sleep(run.campaign.load.pause_s)
            calls_per_s = iteration_task(run, index, step)
            get_run_logger().info("iteration %d %s: %.1f calls/s", index, step, calls_per_s)
            update_progress_artifact(progress, 100.0 * index / planned)
            reason = stop_reason(run.campaign.load, run.results[first:], run.campaign.requirements, run.campaign.capacity)
            if reason:
                reasons.append(reason if len(series) == 1 else f"series {series_label(run.campaign.load, step)}: {reason}")
                get_run_logger().info("stopping: %s", reasons[-1])
                break
        run.stop_reason = "; ".join(reasons) or None


def warm_up_publishing() -> threading.Thread:
    """Build what the validation and the report use first (Great Expectations and its context, matplotlib) in a
    thread while the stage is checked, provisioned and its monitors started, which mostly wait on the hosts:
    2-3 s of CPU that the road from the last iteration to the report carried otherwise (as 1-2 s of wall time
    beside the ingest on 2 cores). The first iteration waits for it (`WARM_UP_WAIT_S` at most), so no load runs
    beside it. Returns the thread."""

    def warm_up() -> None:
        # Importing is Python code that keeps the GIL for the whole switch interval (5 ms): a step beside it (SSH
        # calls, Prefect's) waits that long after each system call. Measured when it ran beside the road's steps:
        # storing the demo's bundle took 0.9-1.3 s (0.17 s alone), at 0.5 ms 0.55-0.9 s.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(WARM_UP_SWITCH_S)
        try:
            prepare_context()
            import_matplotlib()
        except Exception:  # noqa: BLE001 - the step that needs it fails with the same error, named
            pass
        finally:
            sys.setswitchinterval(interval)

    thread = threading.Thread(target=warm_up, name="warm-up", daemon=True)
    thread.start()
    return thread


def close_stage(run: CampaignRun) -> None:
    """Stop monitors, collect, tear down, write run.yaml: each a task, each tried; `finish` does what is left."""
    try:
        for step in (stop_monitors_task, collect_task, teardown_task, bundle_task):
            step(run, return_state=True)
    finally:
        finish(run)


def publish(run: CampaignRun, warehouse: str | None, work_dir: str) -> None:
    """Store the bundle, load it, check its data, build the report; a summary artifact says what happened.

    A store that stays unavailable leaves the complete bundle in the local work folder and fails the flow
    after the rest is done, so the run says where its logs are.
    """
    lines = [f"# Run `{run.run_id}`", "", f"Status: **{run.status}**" + (f" — {run.status_reason}" if run.status_reason else "")]
    lines += ([f"\nStopped: {run.stop_reason}"] if run.stop_reason else []) + [f"- {p}" for p in run.problems]
    stored = store_bundle_task(run.campaign.store)(str(run.bundle), run.run_id, run.campaign.store, return_state=True)
    bundle_uri = stored.result(raise_on_failure=False) if stored.is_completed() else run.bundle.resolve().as_uri()
    lines.append(f"\nBundle stored: {bundle_uri}" if stored.is_completed()
                 else f"\nBundle NOT stored ({stored.message}); every file is kept in {run.bundle}")
    if not run.iterations:
        lines.append("\nNo iteration ran: nothing to ingest.")
    else:
        ingested = ingest_task(str(run.bundle), warehouse, bundle_uri, return_state=True)
        if ingested.is_completed():
            report = ingested.result()
            lines.append("\n" + verdicts_markdown(report.verdicts))
            checked = validate_task(run.run_id, warehouse, str(Path(work_dir) / "reports" / run.run_id), return_state=True)
            lines.append("\n" + (checked.result().markdown() if checked.is_completed() else
                                 f"Validation could not run ({checked.message}); re-run `perfcampaign validate {run.run_id}`."))
            analysed = history_task(run.run_id, warehouse, return_state=True)
            lines.append("\n" + (analysed.result().line() if analysed.is_completed() else
                                 f"History not analysed ({analysed.message})"))
            built = report_task(run.run_id, warehouse, run.campaign.store, work_dir, return_state=True)
            lines.append("\n" + (built.result() if built.is_completed() else f"Report could not be built ({built.message})"))
            lines.append("\n" + site_task(run.campaign.campaign, warehouse, run.campaign.store, work_dir))
        else:
            lines.append(f"\nIngest failed: {ingested.message}. Re-run `perfcampaign ingest {run.bundle}` once fixed.")
    text = "\n".join(lines)
    say(text, err=False)
    create_markdown_artifact(key=artifact_key("run", run.campaign.campaign), markdown=markdown_safe(text),
                             description=f"campaign run {run.run_id}")
    if not stored.is_completed():
        stored.result()  # the store's error fails the flow, now that everything else is done
