"""The demo campaign through a real OpenSSH sshd: every host reached over SSH on 127.0.0.1.

Also: a wrong host key is refused before anything runs, and a connection dropped during an iteration
does not lose the iteration (the load runs detached; polling reconnects), even through a 12 s outage.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
import yaml

from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy
from tests.integration.sshd import sshd  # noqa: F401  (the session fixture)
from tests.integration.tcp_proxy import CuttableProxy

pytestmark = pytest.mark.integration


def _ssh_hosts(server, **overrides) -> dict:
    base = {"transport": "ssh", "address": server.address, "port": server.port, "user": server.user,
            "key_file": str(server.client_key), "known_hosts": str(server.known_hosts), **overrides}
    base = {key: value for key, value in base.items() if value is not None}
    return {"app1": {**base, "role": "sut"}, "app2": {**base, "role": "sut"}, "loadgen": {**base, "role": "loadgen"}}


def _run(tmp_path, hosts, **load):
    from flows.campaign import RunOverrides, campaign_flow

    ports = free_ports(2)
    extra = {"vars.port_app1": str(ports[0]), "vars.port_app2": str(ports[1])}
    campaign = campaign_copy(tmp_path, {"hosts": hosts, "workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store")})
    overrides = RunOverrides(duration_s=load.get("duration_s", 3), pause_s=0, max_steps=load.get("max_steps", 2), extra=extra)
    return campaign_flow(str(campaign), overrides, str(tmp_path / "w.duckdb"), str(tmp_path / "work"))


def _manifest(tmp_path) -> dict:
    (bundle,) = (tmp_path / "store").iterdir()
    return yaml.safe_load((bundle / "run.yaml").read_text())


def test_demo_campaign_over_ssh(prefect_server, sshd, tmp_path, monkeypatch, caplog):
    key_text = sshd.client_key.read_text()
    monkeypatch.setenv("PERF_TEST_SSH_KEY", key_text)
    sessions_before = sshd.log_text.count("Accepted publickey")
    caplog.set_level("DEBUG")
    run_id = _run(tmp_path, _ssh_hosts(sshd, key_file=None, key_env="PERF_TEST_SSH_KEY"))
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "completed" and len(manifest["iterations"]) == 2
    assert sshd.log_text.count("Accepted publickey") > sessions_before  # it really went through sshd
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        sides = dict(con.execute("select side, count(*) from requests where run_id = ? group by 1", [run_id]).fetchall())
        hosts = {r[0] for r in con.execute("select distinct host from host_samples where run_id = ?", [run_id]).fetchall()}
    assert sides["client"] > 0 and sides["server"] >= sides["client"]
    assert hosts == {"app1", "app2", "loadgen"}
    # the key went from the environment to paramiko and nowhere else: not the bundle, the warehouse, the logs
    secret = "".join(key_text.split("\n")[1:3])  # a stretch of the base64 body
    assert len(secret) > 60
    for path in [*(tmp_path / "store").rglob("*"), tmp_path / "w.duckdb"]:
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in caplog.text


def test_a_wrong_host_key_is_refused_before_anything_runs(prefect_server, sshd, tmp_path):
    wrong = tmp_path / "known_hosts"
    other = (sshd.other_key.with_suffix(".pub") if sshd.other_key.with_suffix(".pub").exists()
             else Path(str(sshd.other_key) + ".pub")).read_text().split()
    wrong.write_text(f"[{sshd.address}]:{sshd.port} {other[0]} {other[1]}\n")
    with pytest.raises(Exception, match="hosts not ready") as error:
        _run(tmp_path, _ssh_hosts(sshd, known_hosts=str(wrong)))
    assert "host key" in str(error.value).lower()
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "failed" and manifest["iterations"] == []
    assert not (tmp_path / "stage").exists()  # nothing ran on the host


def test_a_connection_dropped_during_an_iteration_loses_nothing(prefect_server, sshd, tmp_path):
    dropped: list[int] = []

    def drop_once_load_runs():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list((tmp_path / "stage").glob("*/iter1/*/load-iter1.pid")):
            time.sleep(0.1)
        time.sleep(1.0)
        dropped.extend(sshd.drop_sessions())

    killer = threading.Thread(target=drop_once_load_runs, daemon=True)
    killer.start()
    run_id = _run(tmp_path, _ssh_hosts(sshd), duration_s=4, max_steps=1)
    killer.join(timeout=5)
    assert dropped, "the test did not manage to drop a session"
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "completed"
    (k6_summary,) = [s for s in manifest["sources"] if s["kind"] == "k6_summary"]
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        checks = con.execute("select metric, agrees from k6_summary_checks where run_id = ?", [run_id]).fetchall()
    assert checks and all(agrees for _, agrees in checks)  # every request of the iteration was collected


def _processes_under(folder: Path) -> list[str]:
    """Live processes whose command line or working folder names `folder` (java, k6, vmstat, jstat)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (proc / "stat").read_text().split(") ")[-1].startswith("Z"):
                continue
            line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if str(folder) in line or cwd.startswith(str(folder)):
            found.append(f"{proc.name} {line[:150]} (in {cwd})")
    return found


def test_a_12_s_ssh_outage_during_a_k6_iteration_loses_nothing(prefect_server, sshd, tmp_path):
    # k6 runs 14 s; 6 s after it starts the network to every host goes away for 12 s, so k6 ends during the
    # outage and the controller only sees it end once it is back
    proxy = CuttableProxy(sshd.port)
    base = {"transport": "ssh", "address": sshd.address, "port": proxy.port, "user": sshd.user,
            "key_file": str(sshd.client_key), "host_key_fingerprint": sshd.host_key_fingerprint, "connect_timeout_s": 5}
    hosts = {"app1": {**base, "role": "sut"}, "app2": {**base, "role": "sut"}, "loadgen": {**base, "role": "loadgen"}}
    cut: list[float] = []

    def cut_once_load_runs():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list((tmp_path / "stage").glob("*/iter1/*/load-iter1.pid")):
            time.sleep(0.05)
        time.sleep(6)
        cut.append(time.time())
        proxy.cut(12)

    cutter = threading.Thread(target=cut_once_load_runs, daemon=True)
    cutter.start()
    try:
        run_id = _run(tmp_path, hosts, duration_s=14, max_steps=1)
    finally:
        proxy.close()
    cutter.join(timeout=5)
    assert cut and proxy.refused > 0, "the outage did not happen during the run"
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "completed", manifest["status_reason"]
    assert "iteration 1: loadgen: connection lost at" in manifest["status_reason"]
    assert "the load ran on and was waited for" in manifest["status_reason"]
    (iteration,) = manifest["iterations"]
    start, end = (datetime.fromisoformat(str(iteration[k]).replace(" ", "T")) for k in ("start", "end"))
    # k6's own run (its first call to its last, at most its 14 s and a call), not the time the controller noticed
    # its end (>= 6 + 12 s); a busy machine's k6 sends its first call late, so no lower bound but the calls'
    assert (end - start).total_seconds() < 17, (start, end)
    assert end.timestamp() < cut[0] + 12
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        checks = con.execute("select metric, agrees from k6_summary_checks where run_id = ?", [run_id]).fetchall()
        first, last, outside = con.execute(
            "select min(started_at), max(started_at), count(*) filter (where iteration is null) from requests "
            "where run_id = ? and side = 'client'", [run_id]).fetchone()
    assert checks and all(agrees for _, agrees in checks)  # every request k6 counted is in the warehouse
    assert start <= first and last <= end and outside == 0
    assert _processes_under(tmp_path) == []  # java, k6, vmstat, jstat: nothing left on the host


def test_with_sshd_gone_for_good_nothing_started_keeps_running(sshd, tmp_path):
    # the services and a sampler run, a monitor fails to start, and the hosts become unreachable for good:
    # nothing can be stopped over SSH, so the lease (4 s here) stops java and vmstat on the host
    from tasks.campaign.run import check_hosts, finish, mark_failed, open_run, provision_stage, start_all_monitors

    proxy = CuttableProxy(sshd.port)
    base = {"transport": "ssh", "address": sshd.address, "port": proxy.port, "user": sshd.user,
            "key_file": str(sshd.client_key), "host_key_fingerprint": sshd.host_key_fingerprint,
            "connect_timeout_s": 2, "reconnect_s": 1, "lease_s": 4}
    hosts = {"app1": {**base, "role": "sut"}, "app2": {**base, "role": "sut"}, "loadgen": {**base, "role": "loadgen"}}
    ports = free_ports(2)
    monitors = {"app1": [{"kind": "vmstat", "interval_s": 1}],
                "app2": [{"kind": "jstat", "pid_file": str(tmp_path / "no-such.pid"), "interval_s": 1}]}
    campaign = campaign_copy(tmp_path, {"hosts": hosts, "workdir": str(tmp_path / "stage"), "monitors": monitors})
    run = open_run(campaign, tmp_path / "work", {"vars.port_app1": str(ports[0]), "vars.port_app2": str(ports[1])})
    try:
        check_hosts(run)
        provision_stage(run)
        with pytest.raises(Exception, match="no-such.pid") as failure:
            start_all_monitors(run)
        assert len([p for p in _processes_under(tmp_path) if "java" in p or "vmstat" in p]) >= 3
        proxy.cut(10**6)  # for good
        mark_failed(run, failure.value)
        finish(run)
    finally:
        proxy.close()
    deadline = time.monotonic() + 20
    while _processes_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_under(tmp_path) == []
    reason = yaml.safe_load((run.bundle / "run.yaml").read_text())["status_reason"]
    assert "no-such.pid" in reason and "could not stop monitor-vmstat-1" in reason
