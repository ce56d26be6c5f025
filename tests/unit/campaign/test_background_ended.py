"""A service (or background load) that dies after the check that follows each iteration is found when the run
stops it: the run fails, as the check would have failed it, rather than stopping as `completed` in silence.

Real processes on the local transport, each under its lease watchdog as in a campaign."""

from __future__ import annotations

import os
import signal
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from tasks.bundle.manifest import Iteration
from tasks.campaign import run as campaign_run


def _run(tmp_path: Path) -> campaign_run.CampaignRun:
    campaign = tmp_path / "c.yaml"
    campaign.write_text(yaml.safe_dump({
        "campaign": "ended", "stage": "local", "workdir": str(tmp_path / "stage"),
        "hosts": {"app": {"transport": "local", "role": "sut"}, "gen": {"transport": "local", "role": "loadgen"}},
        "provision": [{"background": "svc", "host": "app", "command": "exec sleep 3197"},
                      {"background": "other", "host": "app", "command": "exec sleep 3198"}],
        "load": {"tool": "k6", "script": "infra/k6/echo.js", "generators": ["gen"], "duration_s": 1, "steps": [{"vus": 1}]},
    }))
    run = campaign_run.open_run(campaign, tmp_path / "data")
    run.lease.start()
    campaign_run.provision_stage(run)
    return run


def _kill(run: campaign_run.CampaignRun, name: str) -> None:
    """Kill one background process and wait until the check after an iteration would see it gone."""
    pid = int((Path(run.run_dir) / "background" / f"{name}.pid").read_text())
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while f"app: {name} is not running" not in campaign_run.background_alive(
            run.campaign.provision, run.transports, run.run_dir) and time.monotonic() < deadline:
        time.sleep(0.05)


def _close(run: campaign_run.CampaignRun) -> None:
    campaign_run.stop_all_monitors(run)
    campaign_run.teardown_stage(run)


def test_a_service_dead_after_the_last_check_fails_the_run(tmp_path):
    run = _run(tmp_path)
    start = datetime(2026, 12, 7, tzinfo=timezone.utc)
    run.iterations.append(Iteration(index=3, start=start, end=start + timedelta(seconds=1), load={"vus": 1}))
    try:
        assert campaign_run.background_alive(run.campaign.provision, run.transports, run.run_dir) == []
        _kill(run, "svc")
    finally:
        _close(run)
    assert run.status == "failed"
    assert run.status_reason == "StageError: after iteration 3: app: svc is not running"
    assert not any("svc" in problem for problem in run.problems)  # said once


@pytest.mark.parametrize(("killed", "reason", "said"), [
    ("svc", "during iteration 1: app: svc is not running", []),  # the check after an iteration saw it: said once
    ("other", "k6 on gen exited with 107", ["app: other is not running"]),  # failed for another reason
    ("other", "during iteration 1: webapp: other is not running", ["app: other is not running"]),  # another host's
])
def test_a_failed_run_names_the_deaths_its_reason_does_not(tmp_path, killed, reason, said):
    run = _run(tmp_path)
    try:
        _kill(run, killed)
        campaign_run.mark_failed(run, RuntimeError(reason))
    finally:
        _close(run)
    assert run.status_reason == f"RuntimeError: {reason}"
    assert [problem for problem in run.problems if "not running" in problem] == said


def test_services_stopped_by_the_run_leave_it_completed(tmp_path):
    run = _run(tmp_path)
    _close(run)
    assert run.status == "completed" and run.status_reason is None
    assert not any("not running" in problem for problem in run.problems)
