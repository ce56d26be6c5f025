"""Issue 18 faults 1 and 2 and issue 20 items 10 and 11 as regression tests: what a run form may change.

Nothing here sends load anywhere: fault 2 is checked on the refused override and on the argv a tool would run.
"""

from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath

import pytest
import yaml

from tasks.bundle.hooks import HookRun
from tasks.campaign import run as campaign_run
from tasks.campaign.spec import CampaignError, load_campaign
from tasks.cli.campaign import _overrides
from tasks.loadtools.base import LoadToolError, step_variables
from tasks.loadtools.k6 import K6Tool
from tasks.stage.hooks import HookFailed, run_hooks
from tasks.stage.local import LocalTransport

REPO = Path(__file__).parents[3]
DEMO = REPO / "campaigns" / "demo.yaml"
SCALE = REPO / "campaigns" / "scenarios" / "scale-between-steps.yaml"
VARIABLES = {"repo": "/r", "venv_bin": "/v", "run_id": "x-1", "run_dir": "/d"}


def _hostile_scale_file(tmp_path: Path, payload: str) -> Path:
    """scale-between-steps.yaml as fault 1 left it after the overrides, written into the file itself: the var
    holds `{{step.adapters}}` and the step's adapters a command (closed ports: the curl fails, quickly)."""
    data = yaml.safe_load(SCALE.read_text())
    data["vars"].update(service_delay_ms="{{step.adapters}}", port_app1="9", port_app2="9")
    data["load"].pop("matrix")
    data["load"].pop("ramp")
    data["load"]["steps"] = [{"vus": 1, "adapters": payload}]
    path = tmp_path / "scale.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_fault1_the_overrides_that_ran_a_command_are_refused_before_the_run():
    sets = ['vars.service_delay_ms="{{step.adapters}}"', 'load.steps=[{vus: 1, adapters: "1$(touch pwned)"}]',
            "load.duration_s=2"]
    with pytest.raises(CampaignError) as refused:
        _overrides(SCALE, sets)
    assert str(refused.value).startswith("--set vars.service_delay_ms={{step.adapters}}: expected a whole number")
    with pytest.raises(CampaignError, match=r"--set load.steps=\[.*step key adapters: expected a whole number"):
        _overrides(SCALE, sets[1:])


def test_fault1_a_step_value_inside_a_var_stays_data_when_the_hook_runs(tmp_path, monkeypatch):
    """The mechanism, whatever the types allow: a hook's command is rendered once, so the var's `{{step.adapters}}`
    is text and the step's value one word; before, the var was quoted at load and the step's quoted value put
    inside those quotes (`delay_ms=''1$(touch pwned)''`), which ran the command."""
    monkeypatch.chdir(tmp_path)
    pwned = tmp_path / "pwned"
    payload = f"1$(touch {pwned})"
    campaign = load_campaign(_hostile_scale_file(tmp_path, payload), variables=VARIABLES)
    transports = {name: LocalTransport(host, name) for name, host in campaign.hosts.items()}
    roles = {name: host.role for name, host in campaign.hosts.items()}
    runs: list[HookRun] = []
    with pytest.raises(HookFailed, match="exited with"):  # curl refuses the braces, or finds no server on port 9
        run_hooks("before", campaign.before_step, 1, campaign.load.steps[0], transports, roles, tmp_path, runs)
    assert not pwned.exists(), "a step value ran as a command"
    assert shlex.split(runs[0].command) == ["curl", "-fsS", "-X", "POST", "-G", "-d", f"workers={payload}",
                                            "-d", "delay_ms={{step.adapters}}", "http://127.0.0.1:9/admin/settings"]


@pytest.mark.parametrize("step_key", ["TARGETS", "targets", "target_names", "duration"])
def test_fault2_a_step_key_cannot_aim_the_load_elsewhere(step_key):
    with pytest.raises(CampaignError) as refused:
        _overrides(DEMO, [f'load.steps=[{{vus: 1, {step_key}: "http://10.1.2.3/x"}}]'])
    message = str(refused.value)
    assert message.startswith(f"--set load.steps=[{{vus: 1, {step_key}: ") and "\n" not in message
    assert f"{step_key!r} is not one of this campaign's step keys (vus)" in message
    assert "the load's target and env come from the campaign file" in message


def test_fault2_a_campaign_file_cannot_have_a_step_key_that_replaces_env(tmp_path):
    data = yaml.safe_load(DEMO.read_text())
    data["load"]["ramp"]["start"]["targets"] = "x"
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CampaignError, match="step key 'targets' would replace load.env.TARGETS"):
        load_campaign(path)


def test_fault2_the_k6_target_is_the_campaign_files_whatever_the_step():
    campaign = load_campaign(DEMO, {"load.steps": [{"vus": 3}]}, VARIABLES)
    argv = K6Tool(campaign.load, {}, "/d", REPO).commands(1, {"vus": 3})["loadgen"]
    flags = [argv[n + 1] for n, part in enumerate(argv) if part == "-e"]
    assert "TARGETS=http://127.0.0.1:18081,http://127.0.0.1:18082" in flags and "VUS=3" in flags
    assert [flag for flag in flags if flag.startswith("TARGETS=")] == ["TARGETS=http://127.0.0.1:18081,http://127.0.0.1:18082"]
    # a step made after loading (a soak's target) is checked where the variables are built
    with pytest.raises(LoadToolError, match="'Targets' would replace load.env"):
        step_variables({"vus": 1, "Targets": "http://10.1.2.3/x"}, campaign.load)


def test_fault2_a_url_var_that_the_target_reads_cannot_be_overridden():
    gateway = REPO / "campaigns" / "echo-gateway-matrix.yaml"
    with pytest.raises(CampaignError, match=r"^--set vars.gateway=http://10.1.2.3: vars.gateway holds a value no "
                                            r"override may replace \(a URL"):
        load_campaign(gateway, {"vars.gateway": "http://10.1.2.3"})


def test_item10_a_typed_override_is_coerced():
    campaign = load_campaign(DEMO, {"vars.port_app1": 28081, "load.duration_s": "90s", "load.pause_s": "500ms",
                                    "load.ramp.max_steps": "3"})
    assert campaign.vars["port_app1"] == "28081"
    assert (campaign.load.duration_s, campaign.load.pause_s, campaign.load.ramp.max_steps) == (90, 0.5, 3)


@pytest.mark.parametrize("sets, message", [
    (["vars.port_app1=abc"], "--set vars.port_app1=abc: expected a whole number (the campaign file's value is '18081')"),
    (["load.duration_s=-1"], "--set load.duration_s=-1: expected a duration of 0 or more seconds"),
    (["load.duration_s=0"], "--set load.duration_s=0: load.duration_s: Input should be greater than 0"),
    (["load.ramp.max_steps=500"], "--set load.ramp.max_steps=500: load.ramp.max_steps: Input should be less than or equal to 100"),
    (["load.steps=[]"], "--set load.steps=[]: expected a list of 1 to 100 steps, e.g. [{vus: 10}, {vus: 20}]"),
    (["load.steps=[{vus: [1, 2]}]"], "--set load.steps=[{vus: [1, 2]}]: step key vus: expected a whole number"),
])
def test_item10_an_override_error_names_the_set_not_a_line(sets, message):
    with pytest.raises(CampaignError) as refused:
        _overrides(DEMO, sets)
    assert str(refused.value) == message


def test_item10_a_text_var_that_yaml_read_as_a_number_says_how_to_quote_it():
    path = REPO / "campaigns" / "scenarios" / "before-after-operations.yaml"
    with pytest.raises(CampaignError) as refused:
        _overrides(path, ["vars.sut_version=1.10"])
    assert str(refused.value) == ("--set vars.sut_version=1.1: YAML reads this as 1.1, not as text; to give the text, "
                                  "quote it twice: --set vars.sut_version='\"TEXT\"' (the campaign file's value is '1.0.0')")
    assert load_campaign(path, _overrides(path, ['vars.sut_version="1.10"'])).vars["sut_version"] == "1.10"


def test_item11_each_run_has_its_own_stage_folder_unless_the_campaign_pins_one(tmp_path):
    first = campaign_run.open_run(DEMO, tmp_path / "alice")
    second = campaign_run.open_run(DEMO, tmp_path / "bob")  # maybe the same second, so the same run_id
    for run in (first, second):
        folder = PurePosixPath(run.run_dir)
        assert folder.parent == PurePosixPath("/tmp") and folder.name.startswith(f"perfcampaign-{run.run_id}-")
        assert run.campaign.teardown[0].run == f"rm -rf {run.run_dir}"
    assert first.run_dir != second.run_dir
    data = yaml.safe_load(DEMO.read_text()) | {"workdir": str(tmp_path / "pinned")}
    (tmp_path / "pinned.yaml").write_text(yaml.safe_dump(data))
    pinned = campaign_run.open_run(tmp_path / "pinned.yaml", tmp_path / "carol")
    assert pinned.run_dir == f"{tmp_path}/pinned/{pinned.run_id}"


@pytest.mark.parametrize("overrides", [{"vars.port_app1": "1; touch pwned"},
                                       {"load.steps": [{"vus": 1, "TARGETS": "http://10.1.2.3/x"}]}])
def test_the_run_forms_overrides_are_checked_before_anything_is_touched(tmp_path, overrides):
    """The Prefect form's values take the flow's road (open_run): refused before the bundle folder or a host."""
    with pytest.raises(CampaignError, match=r"^--set "):
        campaign_run.open_run(DEMO, tmp_path / "data", overrides)
    assert not (tmp_path / "data").exists()
