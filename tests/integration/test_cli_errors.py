"""`perfcampaign run` with a failing before_step hook ends in one line and exit 1 (issue 18 fault 7): Prefect's
console log keeps its lines but no traceback (about 280 lines of them before), the traceback only with --debug."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


# A hook that fails, and a service that dies after the last iteration's check (found when the run stops it): each
# is the stage's failure, not a bug, so one line and exit 1 (a RuntimeError was "unexpected ... (a bug)", exit 70).
KILL_APP2 = "kill -9 $(cat {{run_dir}}/background/echo-app2.pid)"


@pytest.mark.parametrize(("hooks", "steps", "said"), [
    ({"before_step": [{"run": "echo {{iteration}} is too many; exit 3", "role": "sut"}]}, 3,
     "before_step hook 0 on app1 for iteration 1 exited with 3"),
    ({"after_step": [{"run": KILL_APP2, "host": "app2"}]}, 1, "StageError: after iteration 1: app2: echo-app2 is not running"),
])
def test_a_failing_run_is_one_error_line(prefect_server, tmp_path, hooks, steps, said):
    from prefect.settings import PREFECT_API_URL

    campaign = campaign_copy(tmp_path, {"workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store"),
                                        "requirements": [], **hooks})
    ports = free_ports(2)
    done = subprocess.run(
        [sys.executable, "-c", "from tasks.cli.main import main; main()", "run", str(campaign), "--set", "load.duration_s=2",
         "--set", "load.pause_s=0", "--set", f'vars.port_app1="{ports[0]}"', "--set", f'vars.port_app2="{ports[1]}"',
         "--set", f"load.ramp.max_steps={steps}", "-w", str(tmp_path / "w.duckdb"), "--work-dir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO), "PREFECT_API_URL": PREFECT_API_URL.value()})
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and '  File "' not in done.stderr, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and said in errors[0], done.stderr[-3000:]
    (bundle,) = (tmp_path / "store").iterdir()  # the run says it too, with every iteration it ran kept
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    assert manifest["status"] == "failed" and said in manifest["status_reason"]
    assert manifest["status_reason"].count("echo-app2") == said.count("echo-app2")  # a death is said once
