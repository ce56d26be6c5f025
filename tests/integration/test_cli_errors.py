"""`perfcampaign run` with a failing before_step hook ends in one line and exit 1 (issue 18 fault 7): Prefect's
console log keeps its lines but no traceback (about 280 lines of them before), the traceback only with --debug."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def test_a_failing_hook_in_run_is_one_error_line(prefect_server, tmp_path):
    from prefect.settings import PREFECT_API_URL

    failing = {"before_step": [{"run": "echo {{iteration}} is too many; exit 3", "role": "sut"}]}
    campaign = campaign_copy(tmp_path, {"workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store"),
                                        "requirements": [], **failing})
    ports = free_ports(2)
    done = subprocess.run(
        [sys.executable, "-c", "from tasks.cli.main import main; main()", "run", str(campaign), "--set", "load.duration_s=2",
         "--set", "load.pause_s=0", "--set", f'vars.port_app1="{ports[0]}"', "--set", f'vars.port_app2="{ports[1]}"',
         "--set", "load.ramp.max_steps=3", "-w", str(tmp_path / "w.duckdb"), "--work-dir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO), "PREFECT_API_URL": PREFECT_API_URL.value()})
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and '  File "' not in done.stderr, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [line for line in errors if "before_step hook 0 on app1 for iteration 1 exited with 3" in line]
    assert len(errors) == 1
