"""The teardown's own steps run after the run's lease has ended: its renewals touch `{run_dir}/lease` on every
host, and one landing during a teardown's `rm -rf {{run_dir}}` made the removal fail ("Directory not empty"),
leaving the run folder behind."""

from __future__ import annotations

from pathlib import Path

import yaml

from tasks.campaign import run as campaign_run
from tasks.stage.local import LocalTransport


def test_the_lease_has_ended_when_the_teardown_steps_run(tmp_path, monkeypatch):
    renewing_during_steps = []

    class Watching(LocalTransport):
        def run(self, cmd, *args, **kwargs):
            if isinstance(cmd, str) and "rm -rf" in cmd:
                renewing_during_steps.append(not run.lease._stop.is_set())
            return super().run(cmd, *args, **kwargs)

    campaign = tmp_path / "c.yaml"
    campaign.write_text(yaml.safe_dump({
        "campaign": "lease", "stage": "local", "workdir": str(tmp_path / "stage"),
        "hosts": {"sut": {"transport": "local", "role": "sut"}, "gen": {"transport": "local", "role": "loadgen"}},
        "provision": [{"background": "svc", "host": "sut", "command": "exec sleep 30"}],
        "teardown": [{"run": "rm -rf {{run_dir}}", "host": "sut"}],
        "load": {"tool": "k6", "script": "infra/k6/echo.js", "generators": ["gen"], "duration_s": 1, "steps": [{"vus": 1}]},
    }))
    monkeypatch.setattr(campaign_run, "open_transport", lambda host, name: Watching(host, name))
    run = campaign_run.open_run(campaign, tmp_path / "data")
    run.lease.start()
    campaign_run.provision_stage(run)
    campaign_run.teardown_stage(run)
    assert renewing_during_steps == [False]
    assert not Path(run.run_dir).exists()
