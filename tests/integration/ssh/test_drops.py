"""Dropped connections: idempotent calls are repeated on a new connection, others are reported."""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import threading
import time

import pytest

from tasks.stage.ssh import SshTransport
from tasks.stage.transport import ConnectionLost
from tests.integration.sshd import Sshd

CMD = ["sh", "-c", "sleep 1.5; echo done"]


def drop_during(sshd: Sshd, after_s: float) -> threading.Thread:
    dropper = threading.Timer(after_s, sshd.drop_sessions)
    dropper.start()
    return dropper


def test_idempotent_command_is_repeated_after_a_drop(sshd: Sshd, caplog):
    caplog.set_level(logging.WARNING, logger="tasks.stage.ssh")
    with SshTransport(sshd.ssh_host(), name="stage") as transport:
        started = time.monotonic()
        dropper = drop_during(sshd, 0.7)
        result = transport.run(CMD, timeout_s=20, idempotent=True)
        dropper.join()
        assert result.stdout == "done\n"
        assert time.monotonic() - started >= 0.7 + 1.5  # the second attempt ran the whole command
    assert len([r for r in caplog.records if "connection lost during" in r.getMessage()]) == 1


def test_other_commands_are_reported_not_repeated(sshd: Sshd):
    with SshTransport(sshd.ssh_host(), name="stage") as transport:
        dropper = drop_during(sshd, 0.7)
        with pytest.raises(ConnectionLost) as raised:
            transport.run(CMD, timeout_s=20)
        dropper.join()
        assert raised.value.retry_safe is False
        assert "stage" in str(raised.value) and "sleep 1.5" in str(raised.value)
        assert "not retried" in str(raised.value)
        assert transport.run(["echo", "again"]).stdout == "again\n"  # the transport reconnects


def test_a_connection_dropped_while_idle_is_reopened_for_any_command(sshd: Sshd):
    with SshTransport(sshd.ssh_host(), name="stage") as transport:
        assert sshd.drop_sessions()
        time.sleep(0.3)
        assert transport.run(["echo", "fresh"]).stdout == "fresh\n"


@pytest.mark.parametrize("how", ["killed", "frozen"])
def test_a_get_cut_off_midway_resumes_on_a_new_connection(sshd: Sshd, tmp_path, caplog, how: str):
    """`killed`: the server side vanishes (TCP closes). `frozen`: it stops answering and TCP stays open."""
    caplog.set_level(logging.WARNING, logger="tasks.stage.ssh")
    source = tmp_path / "big.bin"
    with open(source, "wb") as out:
        for _ in range(64):
            out.write(os.urandom(1 << 20))
    local = tmp_path / "copy.bin"
    part = tmp_path / "copy.bin.part"
    frozen: list[int] = []

    def cut_when_8mb_arrived() -> None:
        while not part.exists() or part.stat().st_size < 8 << 20:
            time.sleep(0.005)
        if how == "killed":
            sshd.drop_sessions()
        else:
            frozen.extend(sshd.session_pids())
            for pid in frozen:
                os.kill(pid, signal.SIGSTOP)

    cutter = threading.Thread(target=cut_when_8mb_arrived, daemon=True)
    try:
        with SshTransport(sshd.ssh_host(connect_timeout_s=1), name="stage") as transport:
            cutter.start()
            transferred = transport.get(str(source), local)
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGKILL)
    assert hashlib.sha256(local.read_bytes()).digest() == hashlib.sha256(source.read_bytes()).digest()
    assert transferred <= (64 - 8) << 20  # the last attempt only fetched what was missing
    assert len([r for r in caplog.records if "connection lost during `get" in r.getMessage()]) == 1


def test_a_frozen_connection_is_abandoned_and_an_unsent_command_runs_on_a_new_one(sshd: Sshd, caplog):
    caplog.set_level(logging.WARNING, logger="tasks.stage.ssh")
    with SshTransport(sshd.ssh_host(connect_timeout_s=1), name="stage") as transport:
        frozen = sshd.signal_sessions(signal.SIGSTOP)  # TCP stays open, nothing answers: keepalive would not notice
        assert frozen
        try:
            started = time.monotonic()
            assert transport.run(["echo", "thawed"]).stdout == "thawed\n"  # not idempotent, but never sent
            assert 1 <= time.monotonic() - started < 4
        finally:
            sshd.signal_sessions(signal.SIGKILL)
    assert len([r for r in caplog.records if "connection lost during `echo thawed`" in r.getMessage()]) == 1
