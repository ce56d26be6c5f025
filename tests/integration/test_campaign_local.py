"""The demo campaign through the Prefect flow on the local transport: real JVMs, real k6, real monitors.

Faults too: the service killed mid-run, k6 failing, a generator that cannot be reached. In every case the
stage is torn down, every collected log is stored and the run says what happened.
"""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
import yaml

from tests.echo_stage import free_ports
from tests.independent import independent_sar
from tests.integration.conftest import campaign_copy

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "campaigns" / "demo.yaml"


def _run(tmp_path: Path, overrides: dict, campaign: Path = DEMO, ports: list[int] | None = None):
    from flows.campaign import RunOverrides, campaign_flow

    ports = ports or free_ports(2)
    in_file = {key: value for key, value in overrides.items() if key.startswith(("hosts", "load.script", "monitors"))}
    extra = {"vars.port_app1": str(ports[0]), "vars.port_app2": str(ports[1]),
             **{key: value for key, value in overrides.items() if key not in in_file}}
    campaign = campaign_copy(tmp_path, {"workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store"),
                                        **in_file}, base=campaign, name=f"run-{campaign.name}")
    chosen = RunOverrides(duration_s=3, pause_s=1, extra=extra)
    return campaign_flow(str(campaign), chosen, str(tmp_path / "w.duckdb"), str(tmp_path / "work")), ports


def _port_closed(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _manifest(tmp_path: Path) -> dict:
    (bundle,) = (tmp_path / "store").iterdir()
    return yaml.safe_load((bundle / "run.yaml").read_text())


def _query(tmp_path: Path, sql: str):
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


# app2 watched by /proc sampling as a host without sysstat would be, beside app1's sar on the same machine
PROCFS_APP2 = [*yaml.safe_load(DEMO.read_text())["monitors"]["app2"],
               {"kind": "procfs", "pid_file": "{{run_dir}}/background/echo-app2.pid", "interval_s": 1}]


def test_demo_campaign_end_to_end(prefect_server, tmp_path):
    run_id, ports = _run(tmp_path, {"load.ramp.max_steps": 2, "monitors.app2": PROCFS_APP2})
    manifest = _manifest(tmp_path)
    assert manifest["run_id"] == run_id and manifest["status"] == "completed"
    flow_run = manifest["prefect"]  # the flow run that ran it, for the site's links
    assert flow_run["flow_run_url"].startswith("http://127.0.0.1:")
    assert flow_run["flow_run_url"].endswith(f"/flow-runs/flow-run/{flow_run['flow_run_id']}")
    assert [it["load"] for it in manifest["iterations"]] == [{"vus": 2}, {"vus": 4}]
    # the machine decides whether 4 VUs still scale; the stop rule and capacity must agree on it
    reason = manifest["status_reason"]
    knee = _query(tmp_path, f"select knee_iteration from capacity where run_id = '{run_id}' and side = 'client'")
    if "saturated at step 2" in reason:
        assert knee == [(1,)], reason
    else:
        assert "reached max_steps (2)" in reason and knee in ([(None,)], []), (reason, knee)
    stored = tmp_path / "store" / run_id
    sums = dict(line.split("  ")[::-1] for line in (stored / "SHA256SUMS").read_text().splitlines())
    assert {s["path"] for s in manifest["sources"]} <= set(sums)
    # every k6 request reached a service and was logged there (the health checks come on top)
    k6_requests = 0
    for source in (s for s in manifest["sources"] if s["kind"] == "k6_json"):
        with gzip.open(stored / source["path"], "rt") as lines:
            k6_requests += sum(1 for line in lines if '"metric":"http_req_duration","type":"Point"' in line.replace(" ", ""))
    logged = sum(
        sum(1 for line in (stored / s["path"]).read_text().splitlines() if '"POST /echo' in line)
        for s in manifest["sources"] if s["kind"] == "access_log"
    )
    assert logged == k6_requests > 0
    assert _query(tmp_path, f"select count(*) from requests where run_id = '{run_id}' and side = 'client'")[0][0] == k6_requests
    hosts = {row[0] for row in _query(tmp_path, f"select distinct host from host_samples where run_id = '{run_id}'")}
    assert hosts == {"app1", "app2", "loadgen"}
    roles = dict(_query(tmp_path, f"select host, any_value(role) from sources where run_id = '{run_id}' group by 1"))
    assert roles == {"app1": "sut", "app2": "sut", "loadgen": "loadgen"}
    _check_sysstat_marts(tmp_path, run_id, manifest, stored)
    # torn down: services gone, the stage's work folder removed
    assert all(_port_closed(port) for port in ports)
    assert not (tmp_path / "stage" / run_id).exists()
    assert _task_runs(tmp_path / "work") == [
        "check-hosts", "provision", "start-monitors", "iteration-1", "iteration-2", "stop-monitors", "collect",
        "teardown", "write-bundle", "store-bundle", "ingest", "validate", "history", "report", "site"]
    home = (tmp_path / "work" / "site" / "index.html").read_text()  # the site task updated the team's site
    assert f">{run_id}<" in home and f'href="campaigns/{manifest["campaign"]}/index.html"' in home


def _check_sysstat_marts(tmp_path: Path, run_id: str, manifest: dict, stored: Path) -> None:
    """The demo's sar and pidstat monitors give the network, disk and process marts, per iteration."""
    (sar,) = [s for s in manifest["sources"] if s["kind"] == "sar"]
    nets, _ = independent_sar((stored / sar["path"]).read_text())
    lo = nets[nets.IFACE == "lo"]
    for iteration in manifest["iterations"]:
        inside = lo[(lo.sampled_at >= pd.Timestamp(iteration["start"])) & (lo.sampled_at < pd.Timestamp(iteration["end"]))]
        (row,) = _query(tmp_path, "select samples, rx_bytes_per_s from host_network_stats where run_id = "
                                  f"'{run_id}' and host = 'app1' and interface = 'lo' and iteration = {iteration['index']}")
        assert row[0] == len(inside) > 0
        assert row[1] == pytest.approx(inside["rxkB/s"].mean() * 1024) and row[1] > 0  # k6 talks to the services on lo
    assert _query(tmp_path, f"select count(distinct iteration) from host_disk_stats where run_id = '{run_id}'")[0][0] == 2
    processes = _query(tmp_path, "select host, command, count(distinct iteration), max(threads_max), max(rss_max_kb) "
                                 f"from process_stats where run_id = '{run_id}' group by all order by host")
    assert [p[:3] for p in processes] == [("app1", "java", 2), ("app2", "java", 2), ("loadgen", "k6", 2)]
    assert processes[0][3] > 10 and processes[0][4] > 10_000  # a JVM: many threads, tens of MB resident
    rules = {r[0] for r in _query(tmp_path, f"select distinct rule from health_findings where run_id = '{run_id}'")}
    assert {"disk_busy", "process_cpu", "thread_growth"} <= rules
    # app2's procfs sees the same loopback as app1's sar (busy with the harness's own traffic too): the bytes each
    # says went over lo between the same two instants agree. sar prints whole seconds, so its samples are placed
    # at each offset of 0-1 s past the printed time (a printed second may be skipped: 48, 50)
    procfs = _query(tmp_path, "select sampled_at, rx_bytes_per_s from host_samples where run_id = "
                              f"'{run_id}' and host = 'app2' and interface = 'lo' order by 1")
    ends = [pd.Timestamp(at) for at, _ in procfs]
    procfs_spans = [(since, to, rate) for since, to, (_, rate) in zip(ends, ends[1:], procfs[1:])]
    window = (ends[0] + pd.Timedelta(seconds=1), ends[-1] - pd.Timedelta(seconds=1))
    procfs_bytes = _bytes_within(procfs_spans, *window)
    sar_ends, sar_rates = list(lo["sampled_at"]), list(lo["rxkB/s"] * 1024)  # a sample covers the time since the last
    sar_bytes = [_bytes_within([(since + pd.Timedelta(seconds=offset), to + pd.Timedelta(seconds=offset), rate)
                                for since, to, rate in zip(sar_ends, sar_ends[1:], sar_rates[1:])], *window)
                 for offset in np.linspace(0, 1, 21)]
    # Inner spans telescope (their bytes are the counters' difference whatever the samples' jitter); only the two
    # sar spans the window's edges cut are uncertain (a busy machine prints a sample late): their bytes bound it.
    edges = sum(rate * (to - since).total_seconds() for since, to, rate in zip(sar_ends, sar_ends[1:], sar_rates[1:])
                if any(since - pd.Timedelta(seconds=1) <= edge <= to + pd.Timedelta(seconds=1) for edge in window))
    assert min(sar_bytes) - edges <= procfs_bytes <= max(sar_bytes) + edges and procfs_bytes > 1_000_000, \
        (procfs_bytes, sar_bytes, edges)
    (jvm,) = _query(tmp_path, "select count(distinct iteration), min(threads_max), min(rss_max_kb) from process_stats "
                              f"where run_id = '{run_id}' and host = 'app2'")
    assert jvm[0] == 2 and jvm[1] > 10 and jvm[2] > 10_000, jvm


def _bytes_within(spans: list[tuple], start: pd.Timestamp, end: pd.Timestamp) -> float:
    """Bytes between two instants from (from, to, bytes per second) spans, each taken as even over its span."""
    return sum(rate * max(0.0, (min(to, end) - max(since, start)).total_seconds()) for since, to, rate in spans)


def _task_runs(work_dir: Path) -> list[str]:
    """The task runs of the campaign flow run that used `work_dir`, in the order they started (Prefect API)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName, FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=["campaign"])))
        (flow_run,) = [r for r in runs if r.parameters.get("work_dir") == str(work_dir)]
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run.id])))
    return [t.name for t in sorted(tasks, key=lambda t: t.start_time or t.expected_start_time)]


def test_a_killed_service_fails_the_run_but_keeps_every_log(prefect_server, tmp_path):
    # app2 killed just before iteration 2's load: its whole 3 s run against a dead service, so the check after it
    # finds it gone (its group's lease watchdog, which outlives it by a second, does not count). A background killer
    # sleeping a fixed time raced the end of iteration 1 on a busy machine: the kill's errors broke the error-rate
    # requirement first and the run was stopped as `completed` before the death was seen. A death after the last
    # check is tests/integration/test_cli_errors.py's.
    kill_app2 = {"run": "[ {{iteration}} -lt 2 ] || kill -9 $(cat {{run_dir}}/background/echo-app2.pid)", "host": "app2"}
    demo = yaml.safe_load(DEMO.read_text())
    demo["before_step"] = [*demo.get("before_step", []), kill_app2]
    campaign = tmp_path / "killer.yaml"
    campaign.write_text(yaml.safe_dump(demo))
    ports = free_ports(2)
    with pytest.raises(Exception, match="echo-app2 is not running"):
        _run(tmp_path, {"load.ramp.max_steps": 3}, campaign=campaign, ports=ports)
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "failed"
    assert "during iteration 2: app2: echo-app2 is not running" in manifest["status_reason"]
    assert manifest["status_reason"].count("echo-app2") == 1
    assert len(manifest["iterations"]) == 2
    kinds = sorted({s["kind"] for s in manifest["sources"]})
    assert kinds == ["access_log", "jstat", "k6_json", "k6_summary", "pidstat", "sar", "vmstat"]
    # ingested anyway, marked failed
    assert _query(tmp_path, "select status from runs") == [("failed",)]
    assert all(_port_closed(port) for port in ports)  # app1 torn down too


def test_k6_failing_is_reported_and_the_stage_torn_down(prefect_server, tmp_path):
    broken = tmp_path / "broken.js"
    broken.write_text("export default function () { throw new Error('boom') ; }\nexport const options = { thresholds: 'x' };\n")
    ports = free_ports(2)
    with pytest.raises(Exception, match="k6 on loadgen exited with"):
        _run(tmp_path, {"load.script": str(broken), "load.ramp.max_steps": 2}, ports=ports)
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "failed" and "k6 on loadgen exited with" in manifest["status_reason"]
    logs = list((tmp_path / "store").glob("*/loadgen/k6-iter1.log"))
    assert logs and logs[0].read_text().strip()  # k6's own words are kept
    assert all(_port_closed(port) for port in ports)
    out = subprocess.run(["pgrep", "-af", "EchoService"], capture_output=True, text=True)
    assert str(tmp_path) not in out.stdout


def test_an_unreachable_generator_fails_before_any_load(prefect_server, tmp_path):
    (port,) = free_ports(1)
    unreachable = {
        "transport": "ssh", "role": "loadgen", "address": "127.0.0.1", "port": port, "user": "nobody",
        "key_env": "NO_SUCH_KEY", "accept_unknown_host_key": True, "connect_timeout_s": 2,
    }
    with pytest.raises(Exception, match="hosts not ready"):
        _run(tmp_path, {"hosts.loadgen": unreachable})
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "failed" and "loadgen" in manifest["status_reason"]
    assert manifest["iterations"] == []


def test_a_background_load_is_collected_and_checked_against_its_declared_rate(prefect_server, tmp_path):
    from tasks.validate.run import validate_run

    demo = yaml.safe_load(DEMO.read_text())
    demo["provision"].append({
        "background": "heartbeat", "host": "loadgen", "declared_rate_per_s": 5,
        "results": {"kind": "k6_json", "path": "{{run_dir}}/background/heartbeat.json.gz"},
        "command": "exec {{venv_bin}}/k6 run --quiet --no-usage-report --address '' --rps 5 --vus 2 --duration 10m "
                   "-e TARGETS=http://127.0.0.1:{{port_app1}} -e TARGET_NAMES=app1 "
                   "--out json={{run_dir}}/background/heartbeat.json.gz {{repo}}/infra/k6/echo.js",
    })
    campaign = tmp_path / "heartbeat.yaml"
    campaign.write_text(yaml.safe_dump(demo))
    run_id, _ = _run(tmp_path, {"load.ramp.max_steps": 2, "load.duration_s": 5}, campaign=campaign)
    manifest = _manifest(tmp_path)
    (background,) = [s for s in manifest["sources"] if s.get("declared_rate_per_s")]
    assert background["kind"] == "k6_json" and background["path"] == "loadgen/heartbeat-results.gz"
    sides = dict(_query(tmp_path, f"select side, count(*) from requests where run_id = '{run_id}' group by 1"))
    assert sides["background"] > 0
    # kept apart: the measured load's client figures do not include the heartbeat
    client = _query(tmp_path, f"select sum(calls) from iteration_summary where run_id = '{run_id}' and side = 'client'")
    k6_points = 0
    for source in (s for s in manifest["sources"] if s["kind"] == "k6_json" and not s.get("declared_rate_per_s")):
        with gzip.open(tmp_path / "store" / run_id / source["path"], "rt") as lines:
            k6_points += sum('"metric":"http_req_duration","type":"Point"' in line.replace(" ", "") for line in lines)
    assert client[0][0] == k6_points
    # the heartbeat's calls per iteration, counted from its raw points (start = k6's end time - duration)
    windows = [(it["index"], pd.Timestamp(it["start"]), pd.Timestamp(it["end"])) for it in manifest["iterations"]]
    expected: dict[int, int] = {}
    with gzip.open(tmp_path / "store" / run_id / background["path"], "rt") as lines:
        for point in map(json.loads, lines):
            if point.get("metric") == "http_req_duration" and point.get("type") == "Point":
                started = pd.Timestamp(point["data"]["time"]) - pd.Timedelta(milliseconds=point["data"]["value"])
                for index, start, end in windows:
                    if start <= started < end:
                        expected[index] = expected.get(index, 0) + 1
    got = dict(_query(tmp_path, f"select iteration, count(*) from requests where run_id = '{run_id}' "
                                "and side = 'background' and iteration is not null group by 1"))
    assert got == expected and set(got) == {index for index, _, _ in windows}
    validate_run(tmp_path / "w.duckdb", run_id)
    rates = _query(tmp_path, f"select success, observed from expectation_results where run_id = '{run_id}' "
                             "and suite = 'background_load'")
    assert rates and all(success for success, _ in rates), rates
