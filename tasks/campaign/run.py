"""One campaign run from start to finish, as plain functions the Prefect tasks of the flow call in order.

State lives in `CampaignRun`: the validated campaign, the open transports, the iterations actually run
and every source collected so far. The closing phases (stop monitors, collect, tear down, write run.yaml)
are each done once: the flow runs them as tasks, and `finish` does whatever a failed or cancelled flow
left undone, so a run that failed half way still keeps every log it got and can be ingested later.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from tasks.bundle.hooks import HookRun
from tasks.bundle.kinds import HOST_SAMPLE_KINDS, KINDS
from tasks.bundle.load_window import LoadWindow
from tasks.bundle.manifest import Iteration, Manifest, PrefectRun, Source
from tasks.bundle.soak import Soak, step_with_target
from tasks.bundle.writer import write_manifest
from tasks.campaign.soak import TargetResolver, soak_of, unpinned, window_iterations
from tasks.campaign.spec import Campaign, load_campaign
from tasks.loadtools.base import LoadTool, LoadToolError, Running, StepResult
from tasks.loadtools.registry import tool_kind
from tasks.settings import REPO
from tasks.stage.hooks import run_hooks
from tasks.stage.hosts import open_transport
from tasks.stage.lease import Lease
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
from tasks.stage.transport import StageError, Transport


@dataclass
class InFlight:
    """An iteration whose load was started and has not been waited for and collected yet."""

    index: int
    step: dict[str, Any]
    running: list[Running]
    started_at: datetime


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
    lease: Lease | None = None
    monitors: list[StartedMonitor] = field(default_factory=list)
    iterations: list[Iteration] = field(default_factory=list)
    results: list[StepResult] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    hooks: list[HookRun] = field(default_factory=list)  # every before_step / after_step command run
    problems: list[str] = field(default_factory=list)
    in_flight: InFlight | None = None  # left by an iteration that failed: stopped and collected at the close
    status: str = "completed"
    status_reason: str | None = None
    stop_reason: str | None = None
    done: set[str] = field(default_factory=set)  # closing phases already carried out
    soak: Soak | None = None  # a soak's windows and where its target came from
    prefect: PrefectRun | None = None  # the Prefect flow run running it, for links to it

    @property
    def finished(self) -> bool:
        return "manifest" in self.done


def open_run(campaign_file: Path, data_dir: Path, overrides: dict[str, Any] | None = None,
             resolve_target: TargetResolver | None = None) -> CampaignRun:
    """Validate the campaign, name the run, make its local bundle folder and its transports.

    A soak's `load.target_from` is resolved here (`resolve_target` reads the warehouse), so a missing earlier
    run fails before the stage is touched.
    """
    campaign_file = Path(campaign_file)
    first = load_campaign(campaign_file, overrides)  # validation before anything is touched
    soak = soak_of(first, campaign_file, resolve_target)
    run_id = f"{first.campaign}-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}"
    run_dir = first.run_dir(run_id)
    variables = {"repo": str(REPO), "venv_bin": str(Path(sys.executable).parent), "run_id": run_id, "run_dir": run_dir}
    campaign = load_campaign(campaign_file, overrides, variables)
    bundle = Path(data_dir) / "runs" / run_id
    bundle.mkdir(parents=True, exist_ok=False)
    run = CampaignRun(campaign, campaign_file, run_id, bundle, run_dir, soak=soak)
    if soak and soak.target:
        campaign.load.steps[0] = step_with_target(campaign.load.steps[0], soak.target)
    run.transports = {name: open_transport(host, name) for name, host in campaign.hosts.items()}
    run.lease = Lease(run.transports, f"{run_dir}/lease")
    run.tool = tool_kind(campaign.load.tool).tool_class(campaign.load, run.transports, run_dir, REPO)
    return run


def check_hosts(run: CampaignRun) -> None:
    """Connect to every host and check that the tools it will need exist; report every host that fails."""
    failures = []
    for name, transport in run.transports.items():
        checks: list[str | list[str]] = [["mkdir", "-p", run.run_dir]]  # lists: every value quoted
        if name in run.campaign.load.generators:
            load = run.campaign.load
            checks.append([load.binary or load.tool, *tool_kind(load.tool).version_args])
        checks += [KINDS[m.kind].sampler_check for m in run.campaign.monitors.get(name, []) if m.kind in HOST_SAMPLE_KINDS]
        for check in checks:
            try:
                transport.connect()
                transport.run(check, timeout_s=60)
            except Exception as exc:
                failures.append(f"{name}: {exc}")
                break
    if failures:
        raise StageError("hosts not ready:\n  " + "\n  ".join(failures))
    run.lease.start()


def provision_stage(run: CampaignRun) -> None:
    """Provision steps in order: uploads, commands, the service and background load, health waits."""
    provision(run.campaign.provision, run.transports, run.run_dir, REPO)
    run.tool.prepare()


def start_all_monitors(run: CampaignRun) -> None:
    """Start the samplers on every host; those started before a failure stay in `run.monitors` to be stopped."""
    start_monitors(run.campaign.monitors, run.transports, run.run_dir, run.monitors)


def _add_sources(run: CampaignRun, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Record collected files as manifest sources (role from the host unless the collector set one)."""
    roles = {name: host.role for name, host in run.campaign.hosts.items()}
    if run.soak and run.soak.window_s:
        found = unpinned(found)
    run.sources += [Source(**{**found_source, "role": found_source.get("role") or roles.get(found_source["host"], "sut")})
                    for found_source in found]
    return found


def run_iteration(run: CampaignRun, index: int, step: dict[str, Any]) -> StepResult:
    """One iteration on all its generators at once: start, wait, record the tool's times, collect, summarise.

    If waiting fails (the load failed, or a host stayed unreachable past its reconnect time), the load is
    left in `run.in_flight`: the closing phases stop it for sure and keep what it wrote.
    """
    load = run.campaign.load
    dead = background_alive(run.campaign.provision, run.transports, run.run_dir)
    if dead:
        raise StageError("before iteration %d: %s" % (index, "; ".join(dead)))
    _hooks(run, "before", index, step)
    outages_before = {name: len(t.outages) for name, t in run.transports.items()}
    started_at = datetime.now(timezone.utc)
    run.in_flight = InFlight(index, step, run.tool.start(index, step), started_at)
    run.tool.wait(run.in_flight.running, timeout_s=load.duration_s * 2 + 120)
    running, run.in_flight = run.in_flight.running, None
    collected = _add_sources(run, run.tool.collect(index, running, run.bundle))
    start, end, window = _record_iteration(run, index, step, running, started_at, collected)
    for name, transport in run.transports.items():
        for outage in transport.outages[outages_before[name]:]:
            run.problems.append(f"iteration {index}: {name}: {outage}; the load ran on and was waited for")
    if not window.calls:  # never "completed" with every requirement "not judged"
        raise LoadToolError(f"iteration {index}: {load.tool} sent 0 calls: {run.tool.why_silent(running)}")
    result = run.tool.summarize(index, step, (end - start).total_seconds(), run.bundle, collected)
    run.results.append(result)
    dead = background_alive(run.campaign.provision, run.transports, run.run_dir)
    if dead:  # the iteration's logs are kept above; its numbers measured a stage that fell apart
        raise StageError("during iteration %d: %s" % (index, "; ".join(dead)))
    _hooks(run, "after", index, step)
    return result


def _hooks(run: CampaignRun, when: str, index: int, step: dict[str, Any]) -> None:
    """The campaign's before_step or after_step hooks for one iteration; a failing one raises (HookFailed)."""
    roles = {name: host.role for name, host in run.campaign.hosts.items()}
    run_hooks(when, getattr(run.campaign, f"{when}_step"), index, step, run.transports, roles, run.bundle, run.hooks)


def _record_iteration(run: CampaignRun, index: int, step: dict[str, Any], running: list[Running],
                      started_at: datetime, collected: list[dict[str, Any]]) -> tuple[datetime, datetime, LoadWindow]:
    """Add the iteration with the load's own window: its first sample's start to its last sample's end in
    the collected results (docs/campaign-format.md, "Iteration windows"). Without a sample, the tool's
    process times (the generators' clocks); where a generator wrote none, the controller's start and now."""
    window = LoadWindow(0)
    try:
        window = run.tool.load_window(run.bundle, collected)
    except Exception as exc:  # an unreadable result file: the warehouse rejects it with its line, this run goes on
        run.problems.append(f"iteration {index}: the load's window could not be read ({exc}); the tool's times kept")
    start, end = window.first_start, window.last_end
    if start is None:
        try:
            start, end = run.tool.times(running)
        except Exception as exc:  # the host is gone: the controller's times are all there is
            run.problems.append(f"iteration {index}: the tool's times could not be read ({exc}); the controller's kept")
    start, end = _ms(start or started_at), _ms(end or datetime.now(timezone.utc), up=True)
    if end <= start:  # a single call shorter than the millisecond
        end = start + timedelta(milliseconds=1)
    if run.soak and run.soak.window_s:
        run.iterations += window_iterations(index, start, end, step, run.soak.window_s, run.campaign.load.warmup_s)
    else:
        run.iterations.append(Iteration(index=index, start=start, end=end, load=step, warmup_s=run.campaign.load.warmup_s))
    return start, end, window


def _ms(moment: datetime, up: bool = False) -> datetime:
    """Bundles keep times to the millisecond: a window's start down, its end `up`, so that the window keeps its
    last call (a sub-millisecond call can start after its end cut down to the millisecond)."""
    cut = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    return cut + timedelta(milliseconds=1) if up and cut < moment else cut


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
                _add_sources(run, [{**step.results, "host": step.host, "path": f"{step.host}/{local}",
                                    "role": "loadgen", "declared_rate_per_s": step.declared_rate_per_s}])


def _once(run: CampaignRun, phase: str) -> bool:
    """True the first time a closing phase is asked for: each is done once, by its task or by `finish`."""
    if phase in run.done:
        return False
    run.done.add(phase)
    return True


def _stop_load(run: CampaignRun) -> None:
    """Stop the load of an iteration that did not finish, and say what each generator's tool was doing."""
    flight = run.in_flight
    if flight is None:
        return
    try:
        said = run.tool.stop(flight.running)
    except Exception as exc:
        said = [f"could not be stopped: {exc}"]
    run.problems.append(f"iteration {flight.index} failed or was interrupted: " + "; ".join(said))


def _collect_unfinished(run: CampaignRun) -> None:
    """Record an unfinished iteration with the times its tool wrote and keep its partial results."""
    flight, run.in_flight = run.in_flight, None
    if flight is None:
        return
    found: list[dict[str, Any]] = []
    try:
        found = _add_sources(run, run.tool.collect(flight.index, flight.running, run.bundle))
        run.problems.append(f"iteration {flight.index}: partial results kept ({len(found)} files)")
    except Exception as exc:
        run.problems.append(f"iteration {flight.index}: results could not be collected: {exc}")
    _record_iteration(run, flight.index, flight.step, flight.running, flight.started_at, found)


def stop_all_monitors(run: CampaignRun) -> None:
    """Stop an unfinished iteration's load, the samplers and the background processes, so files are complete."""
    if _once(run, "stop"):
        _stop_load(run)
        run.problems += stop_monitors(run.monitors, run.transports)
        ended, problems = stop_background(run.campaign.provision, run.transports, run.run_dir)
        run.problems += problems
        _ended_on_their_own(run, ended)


def _ended_on_their_own(run: CampaignRun, ended: list[str]) -> None:
    """Background processes found dead when the run stopped them died after the last check (the one after each
    iteration): the last iteration may have measured a stage falling apart, so a run that would have completed
    fails, as the check would have failed it. A run failed already says it once: only a death it did not name yet
    is added to its problems."""
    if ended and run.status == "completed":
        where = f"after iteration {run.iterations[-1].index}" if run.iterations else "before the first iteration"
        mark_failed(run, StageError(f"{where}: " + "; ".join(ended)))
    else:
        said = run.status_reason or ""
        run.problems += [death for death in ended if f": {death}" not in said and f"; {death}" not in said]


def collect_files(run: CampaignRun) -> None:
    """Copy every monitor's and background process's file into the bundle."""
    if _once(run, "collect"):
        _collect_unfinished(run)
        sources, missed = collect_monitors(run.monitors, run.transports, run.bundle)
        load_sources, run.sources = run.sources, []  # monitors first in the manifest, as they cover every iteration
        _add_sources(run, sources)
        run.sources += load_sources
        run.problems += [f"not collected: {m}" for m in missed + (run.tool.missing if run.tool else [])]
        _collect_background_logs(run)


def teardown_stage(run: CampaignRun) -> None:
    """Teardown steps (always tried, every one), then the connections are closed."""
    if _once(run, "teardown"):
        try:
            # the lease ends once nothing runs: a renewal touching {run_dir}/lease raced a teardown's `rm -rf`
            run.problems += teardown(run.campaign.provision, run.campaign.teardown, run.transports, run.run_dir, REPO,
                                     stopped=_end_lease(run))
        finally:
            _end_lease(run)()
            for transport in run.transports.values():
                transport.close()


def _end_lease(run: CampaignRun) -> Callable[[], None]:
    return run.lease.stop if run.lease is not None else lambda: None


def record_bundle(run: CampaignRun) -> Path:
    """The bundle's run.yaml, typed: the iterations actually run, every source collected, the status."""
    if _once(run, "manifest"):
        write_manifest(run.bundle, manifest_of(run))
    return run.bundle


def manifest_of(run: CampaignRun) -> Manifest:
    """The run as a bundle manifest (format 1)."""
    fields = dict(
        format=1, run_id=run.run_id, campaign=run.campaign.campaign, scenario=run.campaign.scenario,
        labels=run.campaign.labels, timezone="UTC", status=run.status,
        status_reason="; ".join(filter(None, [run.status_reason, run.stop_reason, *run.problems])) or None,
        iterations=run.iterations, requirements=run.campaign.requirements, sources=run.sources,
        thresholds=run.campaign.thresholds, percentile_method=run.campaign.percentile_method,
        capacity=run.campaign.capacity, history=run.campaign.history,
        hooks=run.hooks,
        soak=run.soak, prefect=run.prefect,
    )
    if not run.iterations or not run.sources:
        # Nothing ran, or nothing could be collected: not a loadable bundle, but the record of why is kept.
        return Manifest.model_construct(**fields)
    return Manifest(**fields)


def finish(run: CampaignRun) -> Path:
    """Every closing phase not done yet, in order, each tried whatever the one before did."""
    try:
        stop_all_monitors(run)
        collect_files(run)
    finally:
        try:
            teardown_stage(run)
        finally:
            record_bundle(run)
    return run.bundle
