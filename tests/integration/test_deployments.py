"""Deployments: every one builds from the campaign files; one is served, triggered through the API as the
Prefect UI does, and its run completes with the results in the warehouse."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest
import yaml

from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy

pytestmark = pytest.mark.integration


def _serve_and_trigger_adhoc(tmp_path, duration_s: float, wait_s: float):
    """Serve `campaign/adhoc` in a daemon thread and trigger it through the API, as the UI's Run button does."""
    from prefect import serve
    from prefect.deployments import run_deployment

    from flows.deployments import build_deployments

    adhoc = [d for d in build_deployments() if d.name == "adhoc"]
    threading.Thread(target=serve, args=adhoc, kwargs={"print_starting_message": False}, daemon=True).start()
    ports = free_ports(2)
    campaign = campaign_copy(tmp_path, {"workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store")})
    parameters = {
        "campaign_file": str(campaign),
        "overrides": {"duration_s": duration_s, "pause_s": 0, "max_steps": 1,
                      "extra": {"vars.port_app1": str(ports[0]), "vars.port_app2": str(ports[1])}},
        "warehouse": str(tmp_path / "w.duckdb"),
        "work_dir": str(tmp_path / "work"),
    }
    deadline = time.monotonic() + 60
    while True:  # the runner registers the deployment shortly after it starts
        try:
            return run_deployment("campaign/adhoc", parameters=parameters, timeout=wait_s), ports
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def test_every_campaign_file_becomes_a_deployment():
    from flows.deployments import build_deployments

    deployments = {d.name: d for d in build_deployments()}
    assert set(deployments) == {"demo", "echo-gateway", "echo-soak", "nas-broker", "adhoc"}
    assert deployments["demo"].schedules[0].schedule.cron == "0 2 * * *"
    assert deployments["nas-broker"].schedules[0].schedule.timezone == "Europe/Amsterdam"
    assert deployments["echo-soak"].schedules == []  # `active: false`
    assert deployments["adhoc"].schedules == []


def test_an_adhoc_run_triggered_through_the_api_lands_in_the_warehouse(prefect_server, tmp_path):
    flow_run, _ = _serve_and_trigger_adhoc(tmp_path, duration_s=2, wait_s=300)
    assert flow_run.state.is_completed(), flow_run.state
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        ((run_id, status),) = con.execute("select run_id, status from runs").fetchall()
        assert run_id.startswith("demo-") and status == "completed"
        assert con.execute("select count(*) from iterations where run_id = ?", [run_id]).fetchone() == (1,)
        assert con.execute("select count(*) from requests where run_id = ? and side = 'client'", [run_id]).fetchone()[0] > 0


def test_a_run_cancelled_from_the_ui_tears_down_and_keeps_its_logs(prefect_server, tmp_path):
    """Cancelling a served run (what the UI's Cancel button does) sends it SIGTERM: the flow's own finally
    and its on_cancellation hook tear the stage down and write the bundle, marked cancelled or failed."""
    import socket

    from prefect.client.orchestration import get_client
    from prefect.states import Cancelling

    flow_run, ports = _serve_and_trigger_adhoc(tmp_path, duration_s=60, wait_s=0)
    # wait until the load runs, then cancel as the UI does
    deadline = time.monotonic() + 120
    while not list((tmp_path / "stage").glob("*/iter1/*/load-iter1.pid")):  # iter<i>/<generator>/
        assert time.monotonic() < deadline, "the iteration never started"
        time.sleep(0.5)
    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run.id, Cancelling(), force=True)
        deadline = time.monotonic() + 120
        while not client.read_flow_run(flow_run.id).state.is_final():
            assert time.monotonic() < deadline, "the run did not stop"
            time.sleep(1)
        final = client.read_flow_run(flow_run.id).state
    assert final.is_cancelled(), final
    for port in ports:  # the services are gone
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", port)) != 0
    (bundle,) = list((tmp_path / "work" / "runs").iterdir())
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    assert manifest["status"] in ("cancelled", "failed")
    assert {s["kind"] for s in manifest["sources"]} >= {"access_log", "vmstat", "jstat"}
