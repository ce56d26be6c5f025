"""Secrets: key text from the environment or a Secret block works and never reaches a log record."""

from __future__ import annotations

import logging
import subprocess
import threading
import time

import pytest
from pydantic import SecretStr

from tasks.stage.ssh import SshTransport
from tasks.stage.transport import CommandError
from tests.integration.sshd import Sshd

TOKEN = "tok-5ecret-value-91c2"


def secret_fragments(key_text: str) -> list[str]:
    """Each base64 line of the private key: any one of them in a log would leak key material."""
    return [line for line in key_text.splitlines() if line and not line.startswith("-----")]


def all_logged(caplog) -> str:
    return "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)


def test_key_from_environment_works_and_never_reaches_logs(sshd: Sshd, caplog, monkeypatch):
    key_text = sshd.client_key.read_text()
    monkeypatch.setenv("STAGE_SSH_KEY", key_text)
    caplog.set_level(logging.DEBUG)
    host = sshd.ssh_host(key_file=None, key_env="STAGE_SSH_KEY")
    with SshTransport(host, name="stage") as transport:
        assert transport.run(["echo", "by-env-key"]).stdout == "by-env-key\n"
    assert "**********" in repr(host.private_key()) and key_text not in host.model_dump_json()
    logged = all_logged(caplog)
    assert "paramiko.transport" in logged and "Authentication (publickey) successful" in logged
    assert not [f for f in secret_fragments(key_text) if f in logged]


def test_key_from_a_prefect_secret_block_is_loaded_only_when_used(sshd: Sshd, monkeypatch):
    from prefect.blocks.system import Secret

    loaded: list[str] = []

    def load(name: str):  # stands in for the Prefect API; the SSH side is real
        loaded.append(name)
        return Secret(value=sshd.client_key.read_text())

    monkeypatch.setattr(Secret, "load", staticmethod(load))
    host = sshd.ssh_host(key_file=None, key_secret_block="stage-ssh-key")
    transport = SshTransport(host)
    assert loaded == []
    with transport:
        assert transport.run(["true"]).exit_code == 0
    assert loaded == ["stage-ssh-key"]


def test_secret_env_values_reach_the_command_only(sshd: Sshd, caplog):
    caplog.set_level(logging.DEBUG)
    with SshTransport(sshd.ssh_host(), name="stage") as transport:
        env = {"API_TOKEN": SecretStr(TOKEN)}
        assert transport.run('printf %s "$API_TOKEN"', env=env).stdout == TOKEN
        seen: list[str] = []

        def watch_process_list() -> None:  # every command line on the machine until the command shows up
            deadline = time.monotonic() + 5
            while not any("sleep 1.5" in snapshot for snapshot in seen) and time.monotonic() < deadline:
                seen.append(subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True).stdout)

        watcher = threading.Thread(target=watch_process_list)
        watcher.start()
        with pytest.raises(CommandError) as raised:
            transport.run('sleep 1.5; test "$API_TOKEN" = nope', env=env)
        watcher.join()
    assert any("sleep 1.5" in snapshot for snapshot in seen)
    assert not [snapshot for snapshot in seen if TOKEN in snapshot]  # in no process's arguments, ever
    assert TOKEN not in str(raised.value) and TOKEN not in all_logged(caplog)
