"""Real Apache JMeter 5.6 (`make install` puts it in .venv/bin) on the demo stage, through the campaign flow.

JVM starts are few: one run of campaigns/scenarios/demo-jmeter.yaml (open model, the heartbeat in the
background) and one of campaigns/nas-broker-ramp.yaml's shape on two local generators (closed model, a
heartbeat writing XML), each checked by many tests against pandas over the raw files of its bundle. The
failures (a plan JMeter refuses, a step that sends nothing, a JMeter killed mid-step) run the campaign's
steps without Prefect, one JVM each.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tasks.campaign.run import check_hosts, finish, mark_failed, open_run, provision_stage, run_iteration
from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy
from tests.integration.test_campaign_local import _query, _run
from tests.integration.test_scenarios import ACCESS_LINE

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
JMETER = Path(sys.executable).parent / "jmeter"
DEMO_JMETER = REPO / "campaigns" / "scenarios" / "demo-jmeter.yaml"  # the scenario "demo-jmeter.yaml"
NAS = REPO / "campaigns" / "nas-broker-ramp.yaml"
TEST_START = re.compile(r"Running test \((\d+)\)")
SUMMARY_TOTAL = re.compile(r"summary =\s+(\d+) in [\d:]+ =\s+([\d.]+)/s")

if not JMETER.is_file():
    pytest.skip(f"no {JMETER}: `make install` installs Apache JMeter 5.6.2", allow_module_level=True)


def _ms(epoch_ms: float) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=int(epoch_ms))


class Bundle:
    """A run's bundle and warehouse, read independently of the code under test."""

    def __init__(self, root: Path, run_id: str):
        self.root, self.run_id = root, run_id
        self.folder = root / "store" / run_id
        self.manifest = yaml.safe_load((self.folder / "run.yaml").read_text())
        # a failed ingest leaves the run completed and its bundle kept (the flow says why on stdout): said once
        # here, not as a missing table in every test
        assert self.query("select count(*) from runs where run_id = $run") == [(1,)], f"{run_id} was not ingested"

    def windows(self) -> dict[int, tuple[datetime, datetime]]:
        return {it["index"]: (datetime.fromisoformat(it["start"]), datetime.fromisoformat(it["end"]))
                for it in self.manifest["iterations"]}

    def sources(self, kind: str, background: bool = False) -> list[dict]:
        return [s for s in self.manifest["sources"]
                if s["kind"] == kind and bool(s.get("declared_rate_per_s")) == background]

    def jtl(self, source: dict) -> pd.DataFrame:
        """A JTL as pandas reads it: CSV with its header, or XML's top-level samples (ts, t, lb)."""
        path = self.folder / source["path"]
        if path.read_text()[:200].lstrip().startswith("<"):
            root = ElementTree.parse(path).getroot()
            frame = pd.DataFrame([{"timeStamp": int(s.get("ts")), "elapsed": int(s.get("t")), "label": s.get("lb"),
                                   "threadName": s.get("tn")} for s in root])
        else:
            frame = pd.read_csv(path)
        frame["start"] = frame["timeStamp"].map(_ms)
        frame["end"] = (frame["timeStamp"] + frame["elapsed"]).map(_ms)
        return frame

    def log(self, source: dict) -> str:
        return (self.folder / source["path"]).read_text()

    def access_log(self) -> pd.DataFrame:
        rows = []
        for source in (s for s in self.manifest["sources"] if s["kind"] == "access_log"):
            for line in (self.folder / source["path"]).read_text().splitlines():
                found = ACCESS_LINE.search(line)
                rows.append((source["host"], found["path"], datetime.strptime(found["time"], "%d/%b/%Y:%H:%M:%S %z")))
        return pd.DataFrame(rows, columns=["host", "path", "at"])

    def query(self, sql: str) -> list[tuple]:
        return _query(self.root, sql.replace("$run", f"'{self.run_id}'"))


@pytest.fixture(scope="module")
def demo(prefect_server, tmp_path_factory) -> Bundle:
    """demo-jmeter.yaml scaled down: two open-model steps of 6 s, the heartbeat the whole time."""
    root = tmp_path_factory.mktemp("demo-jmeter")
    overrides = {"load.duration_s": 6, "load.pause_s": 1, "load.steps": [{"rate_per_s": 20}, {"rate_per_s": 50}]}
    run_id, _ = _run(root, overrides, campaign=DEMO_JMETER)
    return Bundle(root, run_id)


def test_demo_jmeter_completes_and_each_window_is_the_loads_own(demo):
    assert demo.manifest["status"] == "completed", demo.manifest.get("status_reason")
    assert [it["load"] for it in demo.manifest["iterations"]] == [{"rate_per_s": 20}, {"rate_per_s": 50}]
    for source, (index, (start, end)) in zip(demo.sources("jtl"), demo.windows().items()):
        assert source["iteration"] == index
        samples = demo.jtl(source)
        (log,) = [s for s in demo.sources("jmeter_log") if s["iteration"] == index]
        marker = _ms(int(TEST_START.search(demo.log(log))[1]))
        # JMeter's own test start (after its JVM's), never later than its first call; the last call's end
        assert start == min(marker, samples["start"].min()) and end == samples["end"].max()


def test_the_warehouse_counts_the_jtl_and_agrees_with_jmeters_summary(demo):
    summary = {i: (calls, rate, offered, dropped) for i, calls, rate, offered, dropped in demo.query(
        "select iteration, calls, calls_per_s, offered_per_s, dropped from iteration_summary "
        "where run_id = $run and side = 'client'")}
    for source in demo.sources("jtl"):
        index = source["iteration"]
        start, end = demo.windows()[index]
        samples, seconds = demo.jtl(source), (end - start).total_seconds()
        calls, rate, offered, dropped = summary[index]
        assert calls == len(samples) and rate == pytest.approx(len(samples) / seconds)
        assert offered == demo.manifest["iterations"][index - 1]["load"]["rate_per_s"]
        assert dropped == max(0, round(offered * seconds) - len(samples))
        # paced: never more than the timer's schedule (how far short a busy machine falls is not the plan's)
        assert len(samples) <= offered * seconds * 1.05 + 2
        (log,) = [s for s in demo.sources("jmeter_log") if s["iteration"] == index]
        jmeter_calls, jmeter_rate = SUMMARY_TOTAL.findall(demo.log(log))[-1]
        assert int(jmeter_calls) == len(samples)
        # JMeter's clock starts with its test (the window's start) and stops when it adds the last sample or
        # ends the test, at or after the window's end (a busy machine: later still); its rate has one decimal
        assert float(jmeter_rate) <= rate * 1.01 + 0.05
    results = demo.query("select expectation, success from expectation_results where run_id = $run "
                         "and suite = 'jmeter_summaries'")
    assert results == [("summary_agrees_with_jtl", True)]


def test_the_access_logs_count_the_jtls_calls(demo):
    """Every JMeter call reached a service and was logged; the log's whole seconds at the window's edges are
    the placement's business, so the warehouse lies between the stamps inside and the stamps overlapping."""
    logged = demo.access_log()
    echo = logged[logged["path"] == "/echo"]
    server = dict(demo.query("select iteration, count(*) from requests where run_id = $run and side = 'server' "
                             "and label = '/echo' and iteration is not null group by iteration"))
    for source in demo.sources("jtl"):
        index = source["iteration"]
        start, end = demo.windows()[index]
        inside = int(((echo["at"] >= start) & (echo["at"] < end)).sum())
        overlapping = int(((echo["at"] + timedelta(seconds=1) > start) & (echo["at"] < end)).sum())
        assert abs(overlapping - len(demo.jtl(source))) <= 0.01 * len(demo.jtl(source))
        assert inside <= server[index] <= overlapping
    assert set(echo["host"]) == {"app1", "app2"}  # the calls alternate between the services


def test_the_heartbeat_ran_beside_the_steps(demo):
    (source,) = demo.sources("jtl", background=True)
    beats = demo.jtl(source)
    assert set(beats["label"]) == {"GET /health"}
    counted = dict(demo.query("select iteration, calls from iteration_summary where run_id = $run "
                              "and side = 'background'"))
    for index, (start, end) in demo.windows().items():
        assert counted[index] == int(((beats["start"] >= start) & (beats["start"] < end)).sum()) > 0


def test_the_report_shows_jmeters_summary_beside_the_warehouses(demo):
    page = (demo.folder / "report" / "report.html").read_text()
    section = page[page.index('id="jmeter"'):]
    section = re.sub(r"<[^>]+>", " ", section[:section.index("</section>")])
    for source in demo.sources("jtl"):
        assert f" {len(demo.jtl(source)):,} " in section


# --- the NAS2 shape: nodes x threads on two generators, closed model, a heartbeat writing XML --------------


def _nas_campaign(root: Path) -> Path:
    """campaigns/nas-broker-ramp.yaml on this machine: its requirements, plan and step shape kept; the broker
    replaced by the two demo echo services, its five hosts by local ones, the steps cut short."""
    ports = [str(port) for port in free_ports(2)]
    echo = ("mkdir -p {{run_dir}}/%s && exec {{repo}}/infra/demo/java-source -Duser.timezone=UTC {{repo}}/infra/demo/EchoService.java "
            "--port %s --access-log {{run_dir}}/%s/access.log --name %s")
    access = {"kind": "access_log", "format": '%h %l %u %t "%r" %s %b %D', "duration_unit": "us"}
    local = {"transport": "local"}
    heartbeat = ("exec {{venv_bin}}/jmeter -n -t {{run_dir}}/heartbeat.jmx -Jthreads=1 -Jrate_per_min=300 "
                 f"-Jduration_s=86400 -Jmethod=GET -Jendpoint=/health -Jmessage_size=0 -Japp_url=http://127.0.0.1:{ports[1]} "
                 "-Jjmeter.save.saveservice.output_format=xml -Jjmeter.save.saveservice.autoflush=true "
                 "-l {{run_dir}}/background/heartbeat.jtl -j {{run_dir}}/background/heartbeat-jmeter.log")
    settings = {
        "workdir": str(root / "stage"), "store": {"uri": str(root / "store")},
        "vars": {"sut_version": "test"},
        "hosts": {"nas-app1": {**local, "role": "sut"}, "nas-app2": {**local, "role": "sut"},
                  **{name: {**local, "role": "loadgen"} for name in ("jm1", "jm2", "jm3")}},
        "provision": [
            {"background": "app1", "host": "nas-app1", "command": echo % ("app1", ports[0], "app1", "app1")},
            {"background": "app2", "host": "nas-app2", "command": echo % ("app2", ports[1], "app2", "app2")},
            {"wait_http": f"http://127.0.0.1:{ports[0]}/health", "host": "nas-app1", "timeout_s": 60},
            {"wait_http": f"http://127.0.0.1:{ports[1]}/health", "host": "nas-app2", "timeout_s": 60},
            {"upload": "infra/jmeter/nas-notify.jmx", "to": "{{run_dir}}/heartbeat.jmx", "host": "jm3"},
            {"background": "heartbeat-load", "host": "jm3", "command": heartbeat, "declared_rate_per_s": 5,
             "results": {"kind": "jtl", "path": "{{run_dir}}/background/heartbeat.jtl"}},
            {"run": "until grep -qs /health {{run_dir}}/background/heartbeat.jtl; do sleep 0.2; done",
             "host": "jm3", "timeout_s": 120},
        ],
        "teardown": [{"run": "rm -rf {{run_dir}}", "host": "jm1"}],
        "monitors": {"nas-app1": [{**access, "path": "{{run_dir}}/app1/access.log"}],
                     "nas-app2": [{**access, "path": "{{run_dir}}/app2/access.log"}],
                     "jm1": [{"kind": "vmstat", "interval_s": 1}], "jm2": [{"kind": "vmstat", "interval_s": 1}]},
        "load.binary": "{{venv_bin}}/jmeter", "load.duration_s": 5, "load.pause_s": 1, "load.until_saturated": True,
        # the tested calls go to app1, the heartbeat to app2
        "load.env": {"app_url": f"http://127.0.0.1:{ports[0]}", "endpoint": "/echo", "think_ms": 20, "ramp_s": 0},
        "load.steps": [{"nodes": 1, "threads": 2}, {"nodes": 2, "threads": 2}],
    }
    return campaign_copy(root, settings, base=NAS, name="nas-local.yaml")


@pytest.fixture(scope="module")
def nas(prefect_server, tmp_path_factory) -> Bundle:
    from flows.campaign import RunOverrides, campaign_flow

    root = tmp_path_factory.mktemp("nas-jmeter")
    run_id = campaign_flow(str(_nas_campaign(root)), RunOverrides(), str(root / "w.duckdb"), str(root / "work"))
    return Bundle(root, run_id)


def test_nas_shape_runs_nodes_x_threads_on_two_generators(nas):
    assert nas.manifest["status"] == "completed", nas.manifest.get("status_reason")
    loads = [it["load"] for it in nas.manifest["iterations"]]
    assert loads[0] == {"nodes": 1, "threads": 2}
    client = dict(nas.query("select iteration, calls from iteration_summary where run_id = $run and side = 'client'"))
    for it in nas.manifest["iterations"]:
        jtls = [s for s in nas.sources("jtl") if s["iteration"] == it["index"]]
        assert sorted(s["host"] for s in jtls) == ["jm1", "jm2"][:it["load"]["nodes"]]  # one JMeter per node
        frames = [nas.jtl(s) for s in jtls]
        for frame in frames:  # closed model: each generator ran `threads` threads
            assert frame["threadName"].nunique() == it["load"]["threads"]
        assert client[it["index"]] == sum(len(frame) for frame in frames)  # the client side is their sum
        start, end = nas.windows()[it["index"]]
        assert end == max(frame["end"].max() for frame in frames)


def test_nas_shape_heartbeat_xml_and_generators_cpu(nas):
    (source,) = nas.sources("jtl", background=True)
    beats = nas.jtl(source)  # XML from the real tool, read by ElementTree
    assert len(beats) > 0 and set(beats["label"]) == {"GET /health"}
    loaded = nas.query("select count(*) from requests where run_id = $run and side = 'background'")
    assert loaded == [(len(beats),)]
    judged = {host for (host,) in nas.query("select distinct host from health_findings where run_id = $run "
                                            "and rule = 'loadgen_cpu'")}
    assert judged == {"jm1", "jm2"}  # each generator's CPU watched by the saturation guard
    statuses = nas.query("select host, iteration, status_code, calls, slow_calls from iteration_status_stats "
                         "where run_id = $run and side = 'server' order by all")
    assert {host for host, *_ in statuses} == {"nas-app1", "nas-app2"}  # per server x iteration x status
    verdicts = dict(nas.query("select requirement_id, count(*) from verdicts where run_id = $run group by all"))
    assert set(verdicts) == {"avg-under-250", "p95-under-500", "errors-under-1pct"}


# --- failures, without Prefect ------------------------------------------------------------------------------


def _failing_run(tmp_path: Path, load: dict):
    """A one-host stage (no service) that runs JMeter once; the step that fails is left to the test."""
    settings = {"workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store"), "provision": [],
                "teardown": [], "monitors": {}, "load": {
                    "tool": "jmeter", "binary": str(JMETER), "generators": ["loadgen"], "duration_s": 4,
                    "env": {"app_url": f"http://127.0.0.1:{free_ports(1)[0]}"}, **load}}
    run = open_run(campaign_copy(tmp_path, settings), tmp_path / "work")
    check_hosts(run)
    provision_stage(run)
    return run


def _fails(run, step: dict, match: str) -> dict:
    with pytest.raises(Exception, match=match) as failure:
        run_iteration(run, 1, step)
    mark_failed(run, failure.value)
    finish(run)
    manifest = yaml.safe_load((run.bundle / "run.yaml").read_text())
    assert manifest["status"] == "failed"
    return manifest


def test_a_plan_jmeter_refuses_fails_the_first_iteration_with_jmeters_message(tmp_path):
    refused = tmp_path / "refused.jmx"  # the plan as shipped before: a property function in an intProp
    refused.write_text((REPO / "infra/jmeter/echo-open.jmx").read_text().replace(
        '<stringProp name="ThreadGroup.num_threads">${__P(threads,10)}</stringProp>',
        '<intProp name="ThreadGroup.num_threads">${__P(threads,10)}</intProp>'))
    run = _failing_run(tmp_path, {"script": str(refused), "steps": [{"rate_per_s": 5}]})
    manifest = _fails(run, {"rate_per_s": 5}, "exited with 1")
    assert 'NumberFormatException: For input string: "${__P(threads,10)}"' in manifest["status_reason"]
    assert (run.bundle / "loadgen" / "jmeter-iter1-console.log").is_file()  # its output is kept


def test_a_step_that_sent_no_calls_fails_the_run(tmp_path):
    run = _failing_run(tmp_path, {"script": "infra/jmeter/nas-notify.jmx", "steps": [{"threads": 0}]})
    manifest = _fails(run, {"threads": 0}, "iteration 1: jmeter sent 0 calls: loadgen: ")
    assert "jmeter sent 0 calls" in manifest["status_reason"]
    assert (run.bundle / "loadgen" / "jmeter-iter1.log").is_file()


def test_a_jmeter_killed_mid_step_fails_the_run_and_its_logs_stay(tmp_path):
    dying = tmp_path / "jmeter-dies"  # the real JMeter, killed once it has written its first result
    dying.write_text(f"""#!/bin/sh
for a; do [ "$prev" = -l ] && jtl=$a; prev=$a; done
[ -n "$jtl" ] || exec "{JMETER}" "$@"
"{JMETER}" "$@" & pid=$!
until grep -qs http "$jtl"; do sleep 0.1; done
kill -KILL $(pgrep -P $pid) $pid; wait $pid
""")
    dying.chmod(0o755)
    run = _failing_run(tmp_path, {"script": "infra/jmeter/nas-notify.jmx", "binary": str(dying),
                                  "duration_s": 60, "steps": [{"threads": 1, "rate_per_min": 600}]})
    manifest = _fails(run, {"threads": 1, "rate_per_min": 600}, "exited with 137")
    kept = {s["path"] for s in manifest["sources"]}
    assert {"loadgen/jmeter-iter1.jtl", "loadgen/jmeter-iter1.log"} <= kept
    assert pd.read_csv(run.bundle / "loadgen" / "jmeter-iter1.jtl").shape[0] >= 1


def test_without_java_the_launcher_names_what_to_install(tmp_path):
    bare = tmp_path / "bin"  # a PATH with a shell and its tools, no java
    bare.mkdir()
    for tool in ("sh", "dirname", "readlink"):
        (bare / tool).symlink_to(shutil.which(tool))
    done = subprocess.run([str(JMETER), "--version"], env={"PATH": str(bare)}, capture_output=True, text=True)
    assert done.returncode == 127
    assert done.stderr.strip() == ("jmeter needs Java (8 or later; 17 tested): "
                                   "apt-get install -y openjdk-17-jre-headless")
