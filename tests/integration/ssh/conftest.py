"""Transport tests: each behavioural test runs over real sshd and over the local transport."""

from __future__ import annotations

import subprocess
import time
from typing import Iterator

import pytest

from tasks.stage.local import LocalTransport
from tasks.stage.ssh import SshTransport
from tasks.stage.transport import LocalHost, Transport
from tests.integration.sshd import sshd  # noqa: F401  (a fixture, registered by importing it here)

# Not `pytest_plugins = ["tests.integration.sshd"]`: pytest refuses that in a conftest below the rootdir
# as soon as it is not among the first conftests loaded, which breaks `pytest tests` (make test).


@pytest.fixture(params=["ssh", "local"])
def transport(request: pytest.FixtureRequest) -> Iterator[Transport]:
    """A connected transport to this machine: over sshd, or with subprocess."""
    if request.param == "ssh":
        chosen: Transport = SshTransport(request.getfixturevalue("sshd").ssh_host(), name="stage-ssh")
    else:
        chosen = LocalTransport(LocalHost(role="sut"), name="stage-local")
    with chosen:
        yield chosen


def processes_matching(pattern: str) -> list[str]:
    """Command lines of live processes matching `pattern` (pgrep -f; zombies have no command line)."""
    found = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


def wait_until_gone(pattern: str, within_s: float = 3.0) -> list[str]:
    """Poll until no process matches `pattern`; return what still matches at the end."""
    deadline = time.monotonic() + within_s
    while (left := processes_matching(pattern)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
