"""One campaign run from start to finish, as plain functions the Prefect flow calls in order.

State lives in `CampaignRun`: the validated campaign, the open transports, the iterations actually run
and every source collected so far. Whatever happens, `finish` stops the monitors, collects every file it
can, tears the stage down and writes the bundle's `run.yaml` with `status` and the reason, so a run that
failed half way still keeps every log it got and can be ingested later.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from tasks.campaign.spec import Campaign, load_campaign
from tasks.loadtools.base import LoadTool, StepResult
from tasks.loadtools.jmeter import JMeterTool
from tasks.loadtools.k6 import K6Tool
from tasks.settings import REPO
from tasks.stage.hosts import open_transport
from tasks.stage.monitors import (
    StartedMonitor,
    collect_monitors,
    start_monitors,
    stop_monitors,
)
from tasks.stage.provision import (
    background_alive,
    background_dir,
    provision,
    stop_background,
    teardown,
)
from tasks.stage.transport import Transport

TOOL_CHECKS = {"k6": "{binary} version", "jmeter": "{binary} --version"}
MONITOR_CHECKS = {"vmstat": "vmstat -V", "jstat": "command -v jstat", "docker_stats": "docker version --format '{{.Client.Version}}'"}


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with milliseconds, as bundles store times."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class CampaignRun:
    """Everything one run knows; the flow passes it from step to step."""

    campaign: Campaign
    campaign_file: Path
    run_id: str
    bundle: Path
    run_dir: str
    transports: dict[str, Transport] = field(default_factory=dict)
    tool: LoadTool | None = None
    monitors: list[StartedMonitor] = field(default_factory=list)
    iterations: list[dict[str, Any]] = field(default_factory=list)
    results: list[StepResult] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    status: str = "completed"
    status_reason: str | None = None
    stop_reason: str | None = None
    finished: bool = False


def open_run(campaign_file: Path, data_dir: Path, overrides: dict[str, Any] | None = None) -> CampaignRun:
    """Validate the campaign, name the run, make its local bundle folder and its transports."""
    campaign_file = Path(campaign_file)
    first = load_campaign(campaign_file, overrides)  # validation before anything is touched
    run_id = f"{first.campaign}-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}"
    run_dir = f"{first.workdir.rstrip('/')}/{run_id}"
    variables = {"repo": str(REPO), "venv_bin": str(Path(sys.executable).parent), "run_id": run_id, "run_dir": run_dir}
    campaign = load_campaign(campaign_file, overrides, variables)
    bundle = Path(data_dir) / "runs" / run_id
    bundle.mkdir(parents=True, exist_ok=False)
    run = CampaignRun(campaign, campaign_file, run_id, bundle, run_dir)
    run.transports = {name: open_transport(host, name) for name, host in campaign.hosts.items()}
    tool_class = K6Tool if campaign.load.tool == "k6" else JMeterTool
    run.tool = tool_class(campaign.load, run.transports, run_dir, REPO)
    return run


def check_hosts(run: CampaignRun) -> None:
    """Connect to every host and check that the tools it will need exist; report every host that fails."""
    failures = []
    for name, transport in run.transports.items():
        checks = [f"mkdir -p {run.run_dir}"]
        if name in run.campaign.load.generators:
            checks.append(TOOL_CHECKS[run.campaign.load.tool].format(binary=run.campaign.load.binary or run.campaign.load.tool))
        checks += [MONITOR_CHECKS[m.kind] for m in run.campaign.monitors.get(name, []) if m.kind in MONITOR_CHECKS]
        for check in checks:
            try:
                transport.connect()
                transport.run(check, timeout_s=60)
            except Exception as exc:
                failures.append(f"{name}: {exc}")
                break
    if failures:
        raise RuntimeError("hosts not ready:\n  " + "\n  ".join(failures))


def provision_stage(run: CampaignRun) -> None:
    """Provision steps in order: uploads, commands, the service and background load, health waits."""
    provision(run.campaign.provision, run.transports, run.run_dir, REPO)
    run.tool.prepare()


def start_all_monitors(run: CampaignRun) -> None:
    """Start the samplers on every host."""
    run.monitors = start_monitors(run.campaign.monitors, run.transports, run.run_dir)


def run_iteration(run: CampaignRun, index: int, step: dict[str, Any]) -> StepResult:
    """One iteration on all its generators at once: start, wait, record the times, collect, summarise."""
    load = run.campaign.load
    dead = background_alive(run.campaign.provision, run.transports, run.run_dir)
    if dead:
        raise RuntimeError("before iteration %d: %s" % (index, "; ".join(dead)))
    started_at = datetime.now(timezone.utc)
    running = run.tool.start(index, step)
    try:
        run.tool.wait(running, timeout_s=load.duration_s * 2 + 120)
    finally:
        ended_at = datetime.now(timezone.utc)
        run.iterations.append({"index": index, "start": iso(started_at), "end": iso(ended_at), "load": step})
        run.sources += run.tool.collect(index, running, run.bundle)
    result = run.tool.summarize(index, step, (ended_at - started_at).total_seconds(), run.bundle,
                                [s for s in run.sources if s.get("iteration") == index])
    run.results.append(result)
    dead = background_alive(run.campaign.provision, run.transports, run.run_dir)
    if dead:
        run.problems += [f"during iteration {index}: {d}" for d in dead]
    return result


def mark_failed(run: CampaignRun, exc: BaseException) -> None:
    """Record why the run failed (a cancellation is recorded as such)."""
    cancelled = type(exc).__name__ in ("TerminationSignal", "CancelledRun", "KeyboardInterrupt")
    run.status = "cancelled" if cancelled else "failed"
    run.status_reason = f"{type(exc).__name__}: {exc}"[:4000]


def _collect_background_logs(run: CampaignRun) -> None:
    """Each background process's console output, and a background load's results as a rated source."""
    for step in run.campaign.background_steps:
        files = [(f"{background_dir(run.run_dir)}/{step.background}.log", f"{step.background}.log")]
        if step.results:
            remote = step.results["path"]
            files.append((remote, f"{step.background}-results{PurePosixPath(remote).suffix}"))
        for remote, local in files:
            try:
                run.transports[step.host].get(remote, run.bundle / step.host / local)
            except Exception as exc:
                run.problems.append(f"{step.host}: could not collect {remote}: {exc}")
                continue
            if step.results and local != f"{step.background}.log":
                run.sources.append({**step.results, "host": step.host, "path": f"{step.host}/{local}",
                                    "role": "loadgen", "declared_rate_per_s": step.declared_rate_per_s})


def finish(run: CampaignRun) -> Path:
    """Stop monitors, collect every file, tear down (always), write run.yaml; returns the bundle folder."""
    if run.finished:
        return run.bundle
    run.finished = True
    try:
        run.problems += stop_monitors(run.monitors, run.transports)
        run.problems += stop_background(run.campaign.provision, run.transports, run.run_dir)  # their files complete
        sources, missed = collect_monitors(run.monitors, run.transports, run.bundle)
        run.sources = sources + run.sources
        run.problems += [f"not collected: {m}" for m in missed + (run.tool.missing if run.tool else [])]
        _collect_background_logs(run)
    finally:
        try:
            run.problems += teardown(run.campaign.provision, run.campaign.teardown, run.transports, run.run_dir, REPO)
        finally:
            for transport in run.transports.values():
                transport.close()
            write_manifest(run)
    return run.bundle


def write_manifest(run: CampaignRun) -> Path:
    """The bundle's run.yaml (format 1) with the iterations actually run, the hosts' roles and the status."""
    roles = {name: host.role for name, host in run.campaign.hosts.items()}
    manifest = {
        "format": 1,
        "run_id": run.run_id,
        "campaign": run.campaign.campaign,
        "scenario": run.campaign.scenario,
        "labels": run.campaign.labels,
        "timezone": "UTC",
        "status": run.status,
        "status_reason": "; ".join(filter(None, [run.status_reason, run.stop_reason, *run.problems])) or None,
        "iterations": run.iterations,
        "requirements": [req.model_dump(exclude_none=True) for req in run.campaign.requirements],
        "thresholds": run.campaign.thresholds,
        "capacity": run.campaign.capacity.model_dump(),
        "sources": [{**source, "role": source.get("role") or roles.get(source["host"], "sut")} for source in run.sources],
    }
    path = run.bundle / "run.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False, width=4096), encoding="utf-8")
    return path
