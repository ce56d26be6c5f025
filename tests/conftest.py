"""Test-wide isolation: no user SSH config, no real cloud credentials, a private Prefect home."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

_PREFECT_HOME = tempfile.mkdtemp(prefix="perfcampaign-prefect-")
os.environ.setdefault("PREFECT_HOME", _PREFECT_HOME)
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

SAMPLES = Path(__file__).parent / "data" / "samples"


def pytest_xdist_make_scheduler(config, log):
    """`make test` runs two pytest-xdist workers, each module whole on one, so a module fixture (one campaign
    run checked by many tests) is built once; the history modules go together, as they share one session
    fixture (32 nightly runs ingested, ~35 s), and so do the site's unit and browser tests (tests/site_history.py).
    (xdist's `--dist loadgroup` marks are not seen under pytest 9.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            if module.startswith("tests/unit/history/"):
                return "tests/unit/history"
            if module.startswith("tests/unit/site/") or module == "tests/integration/test_site_browser.py":
                return "site"  # one session fixture: two campaigns' nightly runs ingested (~90 s)
            return module

    return ModuleScheduling(config, log)


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path_factory):
    """Keep tests away from ~/.ssh, real AWS credentials and the user's default warehouse."""
    fake_home = tmp_path_factory.getbasetemp() / "home"
    fake_home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(fake_home))
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "PERFCAMPAIGN_WAREHOUSE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(fake_home / "aws-config-absent"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(fake_home / "aws-credentials-absent"))


@pytest.fixture
def samples() -> Path:
    """Real perflogs from public test suites and from our own demo stage (see data/samples/SOURCES.md)."""
    return SAMPLES


@pytest.fixture(scope="session")
def sample_warehouse(tmp_path_factory) -> Path:
    """A warehouse file with every sample bundle ingested and validated through the CLI (tests/golden)."""
    from tests.golden.public_tables import ingest_samples

    return ingest_samples(tmp_path_factory.mktemp("samples-warehouse"))
