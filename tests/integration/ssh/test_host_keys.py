"""Host keys: known_hosts and pinned fingerprints are enforced before any authentication."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from tasks.stage.hosts import open_transport
from tasks.stage.local import LocalTransport
from tasks.stage.ssh import AuthenticationFailed, HostKeyRejected, SshTransport
from tasks.stage.transport import ConnectionLost, HostConfig, LocalHost, SshHost
from tests.integration.sshd import Sshd

WRONG_FINGERPRINT = "SHA256:" + "A" * 43


def new_log_lines(sshd: Sshd, before: int) -> str:
    time.sleep(0.2)  # sshd writes its log asynchronously
    return sshd.log_text[before:]


def refused(sshd: Sshd, host: SshHost) -> tuple[str, str]:
    """Connect expecting a host-key refusal; return its message and what sshd logged meanwhile."""
    before = len(sshd.log_text)
    with pytest.raises(HostKeyRejected) as raised:
        SshTransport(host, name="stage").connect()
    return str(raised.value), new_log_lines(sshd, before)


def test_known_hosts_with_another_key_is_refused_before_auth(sshd: Sshd, tmp_path: Path):
    other = (sshd.other_key.with_suffix(".pub")).read_text().split()[1]
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd.port} ssh-ed25519 {other}\n")
    message, logged = refused(sshd, sshd.ssh_host(known_hosts=known))
    assert "differs from" in message and sshd.host_key_fingerprint in message
    assert "publickey" not in logged and "Accepted" not in logged


def test_wrong_pinned_fingerprint_is_refused_before_auth(sshd: Sshd):
    message, logged = refused(sshd, sshd.ssh_host(known_hosts=None, host_key_fingerprint=WRONG_FINGERPRINT))
    assert sshd.host_key_fingerprint in message and WRONG_FINGERPRINT in message
    assert "publickey" not in logged and "Accepted" not in logged


def test_right_pinned_fingerprint_is_accepted(sshd: Sshd):
    host = sshd.ssh_host(known_hosts=None, host_key_fingerprint=sshd.host_key_fingerprint)
    with SshTransport(host) as transport:
        assert transport.run(["echo", "pinned"]).stdout == "pinned\n"


def test_unknown_host_key_is_refused_unless_explicitly_accepted(sshd: Sshd, tmp_path: Path, caplog):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    message, _ = refused(sshd, sshd.ssh_host(known_hosts=empty))
    assert "is not in" in message
    caplog.set_level(logging.WARNING, logger="tasks.stage.ssh")
    with SshTransport(sshd.ssh_host(known_hosts=None, accept_unknown_host_key=True)) as transport:
        assert transport.run(["true"]).exit_code == 0
    assert any(sshd.host_key_fingerprint in r.getMessage() for r in caplog.records)
    assert empty.read_text() == ""  # never written to


def test_a_refused_key_is_not_retried(sshd: Sshd, caplog):
    caplog.set_level(logging.WARNING, logger="tasks.stage.ssh")
    started = time.monotonic()
    with pytest.raises(AuthenticationFailed):
        SshTransport(sshd.ssh_host(key_file=sshd.other_key)).connect()
    assert time.monotonic() - started < 1.5
    assert not [r for r in caplog.records if "retrying" in r.getMessage()]


def test_an_unreachable_host_is_retried_then_reported(sshd: Sshd, caplog):
    from tests.integration.sshd import _free_port

    caplog.set_level(logging.WARNING, logger="tasks.stage.ssh")
    with pytest.raises(ConnectionLost, match="after 4 attempts"):
        SshTransport(sshd.ssh_host(port=_free_port())).connect()
    assert len([r for r in caplog.records if "retrying" in r.getMessage()]) == 3


def test_host_configs_are_validated_at_load(sshd: Sshd):
    adapter = TypeAdapter(HostConfig)
    base = {"transport": "ssh", "address": "10.0.0.5", "user": "perf", "role": "sut", "key_env": "STAGE_KEY"}
    assert isinstance(adapter.validate_python({**base, "known_hosts": "~/.ssh/known_hosts"}), SshHost)
    local = adapter.validate_python({"transport": "local", "role": "loadgen"})
    assert isinstance(local, LocalHost) and isinstance(open_transport(local, "lg"), LocalTransport)
    for bad, expected in [
        (base, "known_hosts or host_key_fingerprint"),
        ({**base, "known_hosts": "k", "host_key_fingerprint": sshd.host_key_fingerprint}, "not both"),
        ({**base, "key_file": "k", "accept_unknown_host_key": True}, "exactly one of"),
        ({**base, "host_key_fingerprint": "MD5:aa:bb"}, "SHA256"),
        ({**base, "accept_unknown_host_key": True, "pasword": "x"}, "unknown key .pasword."),
        ({**base, "accept_unknown_host_key": True, "role": "db"}, "sut"),
    ]:
        with pytest.raises(ValidationError, match=expected):
            adapter.validate_python(bad)
