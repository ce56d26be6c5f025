"""Deployments: every one builds from the campaign files; one is served, triggered through the API as the
Prefect UI does, and its run completes with the results in the warehouse."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from tasks.demo_stage import free_ports

pytestmark = pytest.mark.integration


def test_every_campaign_file_becomes_a_deployment():
    from flows.deployments import build_deployments

    deployments = {d.name: d for d in build_deployments()}
    assert set(deployments) == {"demo", "echo-gateway", "echo-soak", "nas-broker", "adhoc"}
    assert deployments["demo"].schedules[0].schedule.cron == "0 2 * * *"
    assert deployments["nas-broker"].schedules[0].schedule.timezone == "Europe/Amsterdam"
    assert deployments["echo-soak"].schedules == []  # `active: false`
    assert deployments["adhoc"].schedules == []


def test_an_adhoc_run_triggered_through_the_api_lands_in_the_warehouse(prefect_server, tmp_path):
    from prefect import serve
    from prefect.deployments import run_deployment

    from flows.deployments import build_deployments

    adhoc = [d for d in build_deployments() if d.name == "adhoc"]
    server = threading.Thread(target=serve, args=adhoc, kwargs={"print_starting_message": False}, daemon=True)
    server.start()
    ports = free_ports(2)
    parameters = {
        "overrides": {"duration_s": 2, "pause_s": 0, "max_steps": 1,
                      "extra": {"vars.port_app1": str(ports[0]), "vars.port_app2": str(ports[1]),
                                "workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store")}},
        "warehouse": str(tmp_path / "w.duckdb"),
        "work_dir": str(tmp_path / "work"),
    }
    deadline = time.monotonic() + 60
    while True:  # the runner registers the deployment shortly after it starts
        try:
            flow_run = run_deployment("campaign/adhoc", parameters=parameters, timeout=300)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
    assert flow_run.state.is_completed(), flow_run.state
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        ((run_id, status),) = con.execute("select run_id, status from runs").fetchall()
        assert run_id.startswith("demo-") and status == "completed"
        assert con.execute("select count(*) from iterations where run_id = ?", [run_id]).fetchone() == (1,)
        assert con.execute("select count(*) from requests where run_id = ? and side = 'client'", [run_id]).fetchone()[0] > 0
