"""When one machine is not enough: a process work pool and a worker run the same campaign deployment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]


def test_a_worker_of_a_process_pool_runs_the_campaign(prefect_server, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL

    from flows.campaign import campaign_flow

    with get_client(sync_client=True) as client:
        client.create_work_pool(WorkPoolCreate(name="perf-test", type="process"))
    campaign_flow.from_source(source=str(REPO), entrypoint="flows/campaign.py:campaign_flow").deploy(
        name="pool", work_pool_name="perf-test", print_next_steps=False)
    ports = free_ports(2)
    parameters = {
        "campaign_file": str(campaign_copy(tmp_path, {"workdir": str(tmp_path / "stage"),
                                                      "store.uri": str(tmp_path / "store")})),
        "overrides": {"duration_s": 2, "pause_s": 0, "max_steps": 1,
                      "extra": {"vars.port_app1": str(ports[0]), "vars.port_app2": str(ports[1])}},
        "warehouse": str(tmp_path / "w.duckdb"),
        "work_dir": str(tmp_path / "work"),
    }
    flow_run = run_deployment("campaign/pool", parameters=parameters, timeout=0)
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    worker = subprocess.run(
        [str(Path(sys.executable).parent / "prefect"), "worker", "start", "--pool", "perf-test", "--run-once"],
        env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert worker.returncode == 0, worker.stdout[-3000:] + worker.stderr[-3000:]
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(flow_run.id).state
    assert state.is_completed(), (state, worker.stdout[-3000:], worker.stderr[-3000:])
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        assert con.execute("select status, count(*) from runs group by 1").fetchall() == [("completed", 1)]
