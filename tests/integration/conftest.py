"""Fixtures for integration tests: real k6, a real JVM and real monitors, all on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.echo_stage import record_echo_bundle


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
