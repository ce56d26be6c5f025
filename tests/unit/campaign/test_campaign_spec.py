"""Campaign files: every shipped one validates; a bad one names the file and the key; variables and overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tasks.campaign.spec import CampaignError, load_campaign

CAMPAIGNS = sorted((Path(__file__).parents[3] / "campaigns").glob("*.yaml"))
DEMO = Path(__file__).parents[3] / "campaigns" / "demo.yaml"


@pytest.mark.parametrize("path", CAMPAIGNS, ids=[p.stem for p in CAMPAIGNS])
def test_every_shipped_campaign_validates(path):
    campaign = load_campaign(path)
    assert campaign.load.generators and campaign.hosts


def _write(tmp_path, change) -> Path:
    data = yaml.safe_load(DEMO.read_text())
    change(data)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("change", "key", "expected"),
    [
        (lambda d: d["load"].update(generators=["nope"]), "(top level)", "load.generators: no host 'nope'"),
        (lambda d: d["load"].update(generators=["app1"]), "(top level)", "has role sut, expected loadgen"),
        (lambda d: d["load"]["ramp"].update(increment=2), "load.ramp", "exactly one of factor or increment"),
        (lambda d: d["load"].update(steps=[{"vus": 1}]), "load", "exactly one of steps"),
        (lambda d: d["hosts"]["app1"].update(transport="telnet"), "hosts.app1", "telnet"),
        (lambda d: d["hosts"].update(x={"transport": "ssh", "address": "h", "user": "u", "key_env": "K", "role": "sut"}),
         "hosts.x.ssh", "known_hosts or host_key_fingerprint"),
        (lambda d: d["monitors"]["app1"].append({"kind": "jstat"}), "monitors.app1.5", "pid_file or pid_command"),
        (lambda d: d.update(store={"uri": "ftp://x"}), "store.uri", "not supported"),
        (lambda d: d["provision"].append({"run": "true"}), "provision.4", "host"),
        (lambda d: d.update(percentile_method="median"), "percentile_method", "'linear' or 'nearest_rank'"),
    ],
)
def test_bad_campaigns_name_the_file_and_the_key(tmp_path, change, key, expected):
    path = _write(tmp_path, change)
    with pytest.raises(CampaignError) as error:
        load_campaign(path)
    assert str(path) in str(error.value)
    assert key in str(error.value) and expected in str(error.value)


def test_variables_and_overrides(tmp_path):
    variables = {"repo": "/r", "venv_bin": "/v", "run_id": "demo-1", "run_dir": "/w/demo-1"}
    campaign = load_campaign(DEMO, {"load.duration_s": 5, "vars.port_app1": "9999", "load.ramp.max_steps": 2}, variables)
    assert campaign.load.duration_s == 5 and campaign.load.ramp.max_steps == 2
    assert campaign.load.binary == "/v/k6"
    assert campaign.load.env["TARGETS"] == "http://127.0.0.1:9999,http://127.0.0.1:18082"
    assert "--port 9999 --access-log /w/demo-1/app1/access.log" in campaign.provision[0].command
    fixed = load_campaign(DEMO, {"load.steps": [{"vus": 3}]}, variables)
    assert fixed.load.ramp is None and fixed.load.steps == [{"vus": 3}]


def test_an_unknown_variable_is_named(tmp_path):
    path = _write(tmp_path, lambda d: d["load"].update(binary="{{nowhere}}/k6"))
    with pytest.raises(CampaignError, match=r"load.binary: unknown variable \{\{nowhere\}\}"):
        load_campaign(path, variables={"repo": "/r"})


def test_a_whole_placeholder_keeps_its_type(tmp_path):
    def one_step(data):
        data["vars"]["soak_vus"] = "640"
        data["load"].pop("ramp")
        data["load"]["steps"] = [{"vus": "{{soak_vus}}", "message_size": 1024}]

    path = _write(tmp_path, one_step)
    campaign = load_campaign(path, variables={"repo": "/r", "venv_bin": "/v", "run_id": "x", "run_dir": "/w"})
    assert campaign.load.steps == [{"vus": 640, "message_size": 1024}]


def test_a_soak_is_one_step_and_its_windows_fit_in_it(tmp_path):
    path = _write(tmp_path, lambda d: d["load"].update(soak_window_s=5))
    with pytest.raises(CampaignError, match="a soak .* is one step: give steps with exactly one step"):
        load_campaign(path)
    path = _write(tmp_path, lambda d: (d["load"].pop("ramp"), d["load"].update(steps=[{"vus": 2}], soak_window_s=30)))
    with pytest.raises(CampaignError, match="soak_window_s 30 is longer than duration_s 20"):
        load_campaign(path)


def test_secrets_are_not_in_the_campaign(tmp_path):
    """An SSH key is named (file, env var, Prefect block), never written; repr shows no key material."""
    campaign = load_campaign(CAMPAIGNS[[p.stem for p in CAMPAIGNS].index("nas-broker-ramp")])
    assert campaign.hosts["jm1"].key_env == "PERF_SSH_KEY"
    assert "BEGIN" not in repr(campaign)


def test_a_campaign_sets_the_percentile_method_of_its_runs(tmp_path):
    from tasks.campaign.run import CampaignRun, manifest_of

    campaign = load_campaign(_write(tmp_path, lambda d: d.update(percentile_method="nearest_rank")))
    run = CampaignRun(campaign, tmp_path / "c.yaml", "run-1", tmp_path / "bundle", "/tmp/run-1")
    assert manifest_of(run).percentile_method == "nearest_rank"
    assert load_campaign(DEMO).percentile_method == "linear"
