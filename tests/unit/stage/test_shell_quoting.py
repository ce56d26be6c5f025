"""Shell metacharacters through every field that reaches a command: none may run, nothing outside the run is touched.

A campaign on the local transport carries `$(touch PWNED)`, backticks, `;`, quotes and spaces in its workdir,
load binary, load env, vars (inside the campaign's own shell snippets), jstat pid file, docker container and
access-log path. Every step that builds a command runs for real; a command that let a value become shell
syntax would create a PWNED file, and the teardown's `rm -rf {{run_dir}}` would delete `victim`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tasks.campaign import run as campaign_run
from tasks.campaign.spec import CampaignError, load_campaign
from tasks.stage.local import LocalTransport
from tasks.stage.shell import UnsafeValue, join, quote

# Quotes balanced: an unbalanced one would only make an unquoted command a syntax error, hiding the rest.
PAYLOAD = "a b;touch PWNED;$(touch PWNED)`touch PWNED`'q'\"d\"|touch PWNED&"


class RecordingTransport(LocalTransport):
    """The local transport, every command line kept."""

    def __init__(self, host, name):
        super().__init__(host, name)
        self.commands: list[str] = []

    def run(self, cmd, *args, **kwargs):
        self.commands.append(cmd if isinstance(cmd, str) else join(cmd))
        return super().run(cmd, *args, **kwargs)


def _campaign(tmp_path: Path) -> Path:
    stage = tmp_path / f"victim stage {PAYLOAD}"
    pid_dir = tmp_path / "pids" / PAYLOAD.replace("/", "")
    pid_dir.mkdir(parents=True)
    (pid_dir / "java.pid").write_text(f"{os.getpid()}\n")
    data = {
        "campaign": "quoting", "stage": "local", "workdir": str(stage),
        "vars": {"payload": PAYLOAD, "port": "1"},
        "hosts": {"sut": {"transport": "local", "role": "sut"}, "gen": {"transport": "local", "role": "loadgen"}},
        "provision": [
            {"run": "echo {{payload}} > {{run_dir}}/echoed.txt", "host": "sut", "timeout_s": 10},
            {"background": "svc", "host": "sut", "command": "exec sleep 30 # {{payload}} {{run_dir}}"},
            {"upload": "infra/k6/echo.js", "to": "{{run_dir}}/up/{{payload}}.js", "host": "sut"},
            {"wait_tcp": "127.0.0.1:{{port}}", "host": "sut", "timeout_s": 1},
        ],
        "teardown": [{"run": "rm -rf {{run_dir}}", "host": "gen"}],
        "monitors": {"sut": [
            {"kind": "jstat", "pid_file": str(pid_dir / "java.pid")},
            {"kind": "docker_stats", "containers": [PAYLOAD]},
            {"kind": "pidstat", "processes": [PAYLOAD, "java"]},
            {"kind": "pidstat", "pid_file": str(pid_dir / "java.pid")},
            {"kind": "access_log", "path": "{{run_dir}}/" + PAYLOAD.replace("/", "") + ".log", "preset": "tomcat_common_d"},
        ]},
        "load": {"tool": "k6", "binary": str(tmp_path / PAYLOAD.replace("/", "") / "k6"), "script": "infra/k6/echo.js",
                 "generators": ["gen"], "duration_s": 1, "env": {"TARGETS": PAYLOAD}, "steps": [{"vus": 1}]},
    }
    path = tmp_path / "quoting.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_no_value_becomes_shell_syntax(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("must survive")
    monkeypatch.setattr(campaign_run, "open_transport", lambda host, name: RecordingTransport(host, name))
    run = campaign_run.open_run(_campaign(tmp_path), tmp_path / "data")
    steps = [
        lambda: campaign_run.check_hosts(run),
        lambda: campaign_run.provision_stage(run),
        lambda: campaign_run.start_all_monitors(run),
        lambda: run.tool.start(1, {"vus": 1}),
    ]
    for step in steps:
        try:
            step()
        except Exception:  # a missing k6 or a closed port fails the step; what it ran is what matters
            pass
    campaign_run.stop_all_monitors(run)
    campaign_run.teardown_stage(run)

    commands = [line for transport in run.transports.values() for line in transport.commands]
    assert len(commands) > 10 and any("rm -rf" in line for line in commands)
    assert not list(tmp_path.rglob("PWNED")), "a value ran as a command"
    assert (victim / "keep.txt").read_text() == "must survive"
    assert not Path(run.run_dir).exists()  # the teardown removed the run folder itself, whole


def test_template_values_expand_as_one_word(tmp_path):
    demo = yaml.safe_load((Path(__file__).parents[3] / "campaigns" / "demo.yaml").read_text())
    demo["vars"]["port_app1"] = "1; touch PWNED"  # from the file: an override would be refused (not an integer)
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(demo))
    variables = {"repo": "/r", "venv_bin": "/v", "run_id": "demo-1", "run_dir": "/x/victim stage/demo-1"}
    campaign = load_campaign(tmp_path / "demo.yaml", None, variables)
    assert campaign.teardown[0].run == "rm -rf '/x/victim stage/demo-1'"
    assert "--port '1; touch PWNED' --access-log '/x/victim stage/demo-1'/app1/access.log" in campaign.provision[0].command
    # outside shell snippets values stay as they are
    assert campaign.monitors["app1"][-1].path == "/x/victim stage/demo-1/app1/access.log"


@pytest.mark.parametrize("key", ["hosts.loadgen", "provision.1.wait_http", "workdir", "load.binary", "store.uri",
                                 "load.env.TARGETS", "vars.undeclared", "teardown"])
def test_a_run_may_not_override_hosts_commands_or_paths(key):
    demo = Path(__file__).parents[3] / "campaigns" / "demo.yaml"
    with pytest.raises(CampaignError, match=f"override of {key} refused"):
        load_campaign(demo, {key: "x"})


def test_a_nul_byte_is_refused_not_cut():
    with pytest.raises(UnsafeValue):
        quote("a\x00; rm -rf /")
