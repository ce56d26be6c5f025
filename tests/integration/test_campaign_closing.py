"""Closing a run that failed while starting: every sampler started before the failure is stopped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tasks.campaign.run import finish, mark_failed, open_run, start_all_monitors

pytestmark = pytest.mark.integration
DEMO = Path(__file__).resolve().parents[2] / "campaigns" / "demo.yaml"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_a_monitor_that_fails_to_start_leaves_no_sampler_running(tmp_path):
    monitors = {"app1": [{"kind": "vmstat", "interval_s": 1}],
                "app2": [{"kind": "vmstat", "interval_s": 1},
                         {"kind": "jstat", "pid_file": str(tmp_path / "no-such.pid"), "interval_s": 1}]}
    overrides = {"workdir": str(tmp_path / "stage"), "provision": [], "teardown": [], "monitors": monitors}
    run = open_run(DEMO, tmp_path / "work", overrides)
    with pytest.raises(Exception, match="no-such.pid") as failure:
        start_all_monitors(run)
    pid_files = sorted(Path(run.run_dir).glob("monitors/*/monitor-vmstat-1.pid"))
    pids = [int(path.read_text()) for path in pid_files]
    assert len(pids) == 2 and all(_alive(pid) for pid in pids)  # both vmstat samplers were running
    mark_failed(run, failure.value)
    finish(run)
    deadline = time.monotonic() + 3
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)
    manifest = (run.bundle / "run.yaml").read_text()
    assert "status: failed" in manifest and "no-such.pid" in manifest
