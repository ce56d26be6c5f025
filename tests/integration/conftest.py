"""Fixtures for integration tests: real k6, a real JVM and real monitors, all on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.echo_stage import record_echo_bundle

DEMO = Path(__file__).resolve().parents[2] / "campaigns" / "demo.yaml"


@pytest.fixture(scope="session")
def echo_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short demo bundle (1 then 3 VUs, 3 s each) recorded once per test session."""
    return record_echo_bundle(tmp_path_factory.mktemp("echo-bundle"), steps=[1, 3], duration_s=3, pause_s=1)


@pytest.fixture(scope="session")
def prefect_server():
    """One Prefect test-harness server (SQLite, ephemeral) for the whole session; never nested."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


def campaign_copy(tmp_path: Path, settings: dict, base: Path | None = None, name: str = "campaign.yaml") -> Path:
    """A copy of a campaign file (demo.yaml by default) with dotted keys set, e.g. {"workdir": ..., "store.uri": ...}.

    Hosts, paths and the store are the campaign file's to say (a run may only override the allow-list of
    tasks/campaign/spec.py), so tests that need their own write them into a copy.
    """
    data = yaml.safe_load((base or DEMO).read_text())
    for dotted, value in settings.items():
        target = data
        *parents, last = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path
