"""Property: whatever a value holds, every command built from a template is the command intended (issue 18).

Hypothesis makes values out of every shell metacharacter, quotes, newlines, `$(...)`, backticks and
placeholders (`{{step.k}}`, `{{run_dir}}`) and puts them where campaign values go: vars, the run folder, a
step's value, the iteration, an override. Each template is then rendered by the code that renders it for a
run (provision and teardown steps, background commands, health waits, uploads, monitors, hooks, the k6 and
JMeter command lines) on a transport that keeps the command line instead of running it, and the line is
split as a shell would (`shlex`, at unquoted `;`, `&`, `|`): the words must be exactly the argv intended,
each value one word, whole. (test_shell_quoting.py runs such commands for real.)
"""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tasks.campaign.spec import CampaignError, load_campaign
from tasks.stage.shell import PLACEHOLDER
from tasks.loadtools.jmeter import JMeterTool
from tasks.loadtools.k6 import K6Tool
from tasks.stage.hooks import run_hooks
from tasks.stage.local import LocalTransport
from tasks.stage.monitors import start_monitors
from tasks.stage.provision import provision, teardown
from tasks.stage.shell import join
from tasks.stage.transport import CommandResult

REPO = Path(__file__).parents[3]
METACHARACTERS = list(" \t\n\r!\"#$&'()*;<>?[\\]^`{|}~%=,:/@+-.") + [
    "$(touch PWNED)", "`touch PWNED`", "${IFS}", "{{step.k}}", "{{ iteration }}", "{{run_dir}}", "{{v}}", "'\\''",
    "--", "-e", "\\n", "é", "\u2028"]
VALUES = st.lists(st.one_of(st.sampled_from(METACHARACTERS),
                            st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=3)),
                  min_size=1, max_size=8).map("".join)
# a step value in the file is a template (`vus: '{{soak_vus}}'`): there a placeholder is the file's own
STEP_VALUES = st.one_of(VALUES.filter(lambda text: not PLACEHOLDER.search(text)), st.integers(-10**9, 10**9), st.floats(allow_nan=False, allow_infinity=False))
PROPERTY = settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


class Keeper(LocalTransport):
    """The local transport's interface, every command line kept instead of run (a pid file holds 123)."""

    def __init__(self, host, name):
        super().__init__(host, name)
        self.lines: list[str] = []
        self.detached: dict[str, str] = {}
        self.puts: list[str] = []

    def run(self, cmd, *args, **kwargs):
        self.lines.append(cmd if isinstance(cmd, str) else join(cmd))
        return CommandResult(0, "123\n", "", 0.0)

    def start_detached(self, name, cmd, workdir):
        self.detached[name] = cmd if isinstance(cmd, str) else join(cmd)
        return 1

    def stop_detached(self, name, workdir, grace_s=5):
        return "absent"

    def put(self, local, remote):
        self.puts.append(remote)


def commands_of(line: str) -> list[list[str]]:
    """The simple commands of a shell line, each as `shlex.split` gives its words: the line is cut at the
    `;`, `&`, `|` and newlines that no quote or backslash protects, as a POSIX shell cuts it."""
    pieces, start, quote, n = [], 0, "", 0
    while n < len(line):
        char = line[n]
        if char == "\\" and quote != "'":
            n += 2
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in ";&|\n":
            pieces.append(line[start:n])
            start = n + 1
        n += 1
    pieces.append(line[start:])
    return [words for piece in pieces if (words := shlex.split(piece))]


def _campaign(folder: Path, v: str, k, tool: str = "k6", overrides: dict | None = None, file_v: str | None = None):
    data = {
        "campaign": "paths", "stage": "local",
        "vars": {"v": v if file_v is None else file_v, "port": "9"},
        "hosts": {"sut": {"transport": "local", "role": "sut"}, "gen": {"transport": "local", "role": "loadgen"}},
        "provision": [
            {"run": "printf %s {{v}} {{run_dir}}", "host": "sut"},
            {"background": "svc", "command": "exec sleep 1 {{v}}", "host": "sut"},
            {"wait_http": "http://127.0.0.1:{{port}}/{{v}}", "host": "sut", "timeout_s": 1},
            {"upload": "infra/k6/echo.js", "to": "{{run_dir}}/up/{{v}}.js", "host": "sut"},
        ],
        "teardown": [{"run": "rm -rf {{run_dir}} {{v}}", "host": "gen"}],
        "monitors": {"sut": [{"kind": "jstat", "pid_command": "cat {{v}}"},
                             {"kind": "pidstat", "pid_file": "{{run_dir}}/{{v}}.pid"},
                             {"kind": "docker_stats", "containers": ["c-{{v}}"]}]},
        "before_step": [{"run": "printf %s {{v}} {{step.k}} {{iteration}} {{run_dir}}", "host": "sut"}],
        "load": {"tool": tool, "binary": "/b/{{v}}", "script": "infra/k6/echo.js", "generators": ["gen"],
                 "duration_s": 1, "env": {"X": "pre-{{v}}"}, "steps": [{"vus": 1, "k": k}]},
    }
    path = folder / "paths.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _rendered(folder: Path, path: Path, run_dir: str, index: int, overrides: dict | None = None):
    """Every command a run of the campaign builds, by the code that builds it."""
    variables = {"repo": str(REPO), "venv_bin": "/venv", "run_id": "paths-1", "run_dir": run_dir}
    campaign = load_campaign(path, overrides, variables)
    transports = {name: Keeper(host, name) for name, host in campaign.hosts.items()}
    provision(campaign.provision, transports, run_dir, REPO)
    start_monitors(campaign.monitors, transports, run_dir, [])
    run_hooks("before", campaign.before_step, index, campaign.load.steps[0], transports,
              {name: host.role for name, host in campaign.hosts.items()}, folder, runs := [])
    tools = {name: tool(campaign.load.model_copy(update={"tool": name}), transports, run_dir, REPO)
             for name, tool in (("k6", K6Tool), ("jmeter", JMeterTool))}
    argv = {}
    for name, tool in tools.items():
        argv[name] = tool.commands(index, campaign.load.steps[0])["gen"]
        tool.start(index, campaign.load.steps[0])
        transports["gen"].detached[name] = transports["gen"].detached.pop(f"load-iter{index}")
    teardown(campaign.provision, campaign.teardown, transports, run_dir, REPO)
    return campaign, transports, runs, argv


def _check(campaign, transports, runs, argv, v: str, run_dir: str, index: int) -> None:
    sut, gen = transports["sut"], transports["gen"]
    k = campaign.load.steps[0]["k"]
    assert commands_of(sut.lines[0]) == [["printf", "%s", v, run_dir]]  # provision run
    assert commands_of(sut.detached["svc"]) == [["exec", "sleep", "1", v]]  # background
    wait = commands_of(sut.lines[1])[0]
    assert wait[:4] == ["timeout", "1", "sh", "-c"] and wait[5:] == [f"http://127.0.0.1:9/{v}"]  # health wait
    to = f"{run_dir}/up/{v}.js"
    assert commands_of(sut.lines[2]) == [["mkdir", "-p", str(Path(to).parent)]] and sut.puts == [to]  # upload
    assert commands_of(sut.lines[3]) == [["cat", v]]  # jstat's pid_command
    assert commands_of(sut.lines[4]) == [["cat", f"{run_dir}/{v}.pid"]]  # pidstat's pid_file
    docker = [words for words in commands_of(sut.detached["monitor-docker-stats-3"]) if words[0] == "docker"]
    assert docker == [["docker", "stats", "--no-stream", f"c-{v}"]]
    expected_hook = ["printf", "%s", v, str(k), str(index), run_dir]
    assert commands_of(runs[0].command) == [expected_hook] and commands_of(sut.lines[5]) == [expected_hook]
    for name, pairs in (("k6", ["-e", f"X=pre-{v}", "-e", f"K={k}"]), ("jmeter", [f"-JX=pre-{v}", f"-Jk={k}"])):
        words = argv[name]
        assert words[0] == f"/b/{v}" and all(pair in words for pair in pairs)  # the values, whole, one word each
        assert words in commands_of(gen.detached[name])  # the shell runs that argv
    assert commands_of(gen.lines[-1]) == [["rm", "-rf", run_dir, v]]  # teardown


@PROPERTY
@example(v="{{step.k}}", k="1$(touch PWNED)", run_dir="/x/{{v}}/run", index=1)  # issue 18 fault 1, nested
@given(v=VALUES, k=STEP_VALUES, run_dir=VALUES.map(lambda text: f"/x/{text}/run"), index=st.integers(1, 10**6))
def test_every_template_renders_the_intended_argv(folder, v, k, run_dir, index):
    campaign, transports, runs, argv = _rendered(folder, _campaign(folder, v, k), run_dir, index)
    assert campaign.vars["v"] == v and campaign.load.steps[0]["k"] == k  # data in, data out
    _check(campaign, transports, runs, argv, v, run_dir, index)


@PROPERTY
@given(v=st.one_of(VALUES, st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,20}", fullmatch=True)),
       k=st.one_of(VALUES, st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,20}", fullmatch=True)),
       index=st.integers(1, 1000))
def test_an_override_is_refused_before_the_run_or_renders_the_intended_argv(folder, v, k, index):
    """Overrides of a text var and of a step's text value (the file declares words): refused by their type, or
    every command above is exactly the intended one."""
    path = _campaign(folder, v, "word", file_v="word")
    run_dir = "/x/run dir"
    try:
        campaign, transports, runs, argv = _rendered(folder, path, run_dir, index,
                                                     {"vars.v": v, "load.steps": [{"vus": 1, "k": k}]})
    except CampaignError as refused:
        assert str(refused).startswith("--set ") and "\n" not in str(refused)
        event("refused")
        return
    event("rendered")
    _check(campaign, transports, runs, argv, v, run_dir, index)
