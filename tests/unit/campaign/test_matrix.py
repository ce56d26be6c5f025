"""Matrix steps: the combinations a campaign expands to, alone or with a ramp, and the load file's errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from tasks.campaign.ramp import planned_series, planned_steps, series_label, stop_reason
from tasks.campaign.spec import CampaignError, load_campaign
from tasks.loadtools.base import StepResult
from tasks.loadtools.config import Load
from tasks.stage.hooks import hook_command

BASE = {"tool": "k6", "script": "s.js", "generators": ["g"], "duration_s": 10}


def test_a_matrix_alone_is_every_combination_first_key_outermost():
    load = Load(**BASE, matrix={"users": [50, 200], "message_size": [7, 1024, 102400]})
    assert planned_steps(load) == [
        {"users": 50, "message_size": 7}, {"users": 50, "message_size": 1024}, {"users": 50, "message_size": 102400},
        {"users": 200, "message_size": 7}, {"users": 200, "message_size": 1024}, {"users": 200, "message_size": 102400}]
    assert len(planned_series(load)) == 1  # run to its end, like fixed steps
    results = [StepResult(n, step, 10.0, 100, 0, {}) for n, step in enumerate(planned_steps(load), 1)]
    assert stop_reason(load, results[:5], []) is None
    assert stop_reason(load, results, []) == "all steps run"


def test_a_ramp_with_a_matrix_ramps_through_each_series_in_turn():
    load = Load(**BASE, matrix={"adapters": [1, 2], "message_size": [64, 512]},
                ramp={"start": {"vus": 2}, "factor": 2, "max_steps": 3})
    series = planned_series(load)
    assert [[(s["adapters"], s["message_size"], s["vus"]) for s in steps] for steps in series] == [
        [(1, 64, 2), (1, 64, 4), (1, 64, 8)], [(1, 512, 2), (1, 512, 4), (1, 512, 8)],
        [(2, 64, 2), (2, 64, 4), (2, 64, 8)], [(2, 512, 2), (2, 512, 4), (2, 512, 8)]]
    assert list(series[0][0]) == ["adapters", "message_size", "vus"]  # every key kept, the matrix's first
    assert series_label(load, series[2][1]) == "adapters=2 message_size=64"
    # the stop rule judges one series: a saturated series stops, the next starts from the ramp's start
    flat = [StepResult(1, series[1][0], 10.0, 1000, 0, {}), StepResult(2, series[1][1], 10.0, 1010, 0, {})]
    assert "saturated at step 2" in stop_reason(load, flat, [])
    assert stop_reason(load, flat[:1], []) is None


@pytest.mark.parametrize("matrix, ramp, message", [
    ({"users": []}, None, "matrix.users is empty"),
    ({"vus": [1, 2]}, {"start": {"vus": 2}, "factor": 2}, "matrix.vus is also in ramp.start"),
    ({"size": [{"a": 1}]}, None, "matrix.size"),
])
def test_a_bad_matrix_is_refused_with_its_key(matrix, ramp, message):
    with pytest.raises(ValidationError, match=message.replace(".", r"\.")):
        Load(**BASE, matrix=matrix, **({"ramp": ramp} if ramp else {}))


def test_a_matrix_does_not_go_with_fixed_steps():
    with pytest.raises(ValidationError, match="exactly one of steps"):
        Load(**BASE, matrix={"users": [1]}, steps=[{"vus": 1}])


SCENARIOS = Path(__file__).parents[3] / "campaigns" / "scenarios"


@pytest.mark.parametrize("name", ["user-payload-matrix", "scale-between-steps"])
def test_the_matrix_scenarios_validate_and_expand(name):
    campaign = load_campaign(SCENARIOS / f"{name}.yaml", variables={"repo": "/r", "venv_bin": "/v", "run_id": "x",
                                                                      "run_dir": "/d"})
    series = planned_series(campaign.load)
    assert len(series) == (1 if name == "user-payload-matrix" else 3)
    assert len(planned_steps(campaign.load)) == (12 if name == "user-payload-matrix" else 18)
    if campaign.before_step:  # a step's key goes into the command as one word, with the vars, per step
        command = campaign.before_step[0].command(4, series[2][0])
        assert command.startswith("curl -fsS -X POST -G -d workers=4 -d delay_ms=20 http://127.0.0.1:18081/")


def _with_hook(tmp_path, hook: dict) -> Path:
    data = yaml.safe_load((SCENARIOS / "scale-between-steps.yaml").read_text())
    data["before_step"] = [hook]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("hook, message", [
    ({"run": "echo {{step.replicas}}", "host": "app1"}, "before_step.0.run: {{step.replicas}} but planned step 1 has no 'replicas'"),
    ({"run": "true", "host": "nope"}, "before_step.0.host: no host 'nope'"),
    ({"run": "true", "role": "dependency"}, "before_step.0.role: no host has role dependency"),
    ({"run": "true", "host": "app1", "role": "sut"}, "exactly one of host or role"),
    ({"run": "echo {{nope}}", "host": "app1"}, "before_step.0.run: unknown variable {{nope}}"),
])
def test_a_bad_hook_is_refused_naming_it(tmp_path, hook, message):
    with pytest.raises(CampaignError, match=re.escape(message)):
        load_campaign(_with_hook(tmp_path, hook), variables={"repo": "/r", "venv_bin": "/v", "run_id": "x", "run_dir": "/d"})


def test_hook_values_are_one_shell_word_each():
    assert hook_command("echo {{step.name}} {{ iteration }}", 7, {"name": "a b; rm -rf /"}) == "echo 'a b; rm -rf /' 7"
