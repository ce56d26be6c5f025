"""Commands: output, exit codes, timeouts and quoting, over sshd and locally."""

from __future__ import annotations

import time

import pytest

from tasks.stage.transport import CommandError, CommandTimeout, Transport
from tests.integration.ssh.conftest import processes_matching, wait_until_gone

FIVE_MB = 5_000_000
NASTY = "it's \"quoted\" $HOME; echo injected `id` $(id) \\ * ~ \ttab\nnewline & | > /tmp/x"


def test_5mb_stdout_and_5mb_stderr_at_once_do_not_deadlock(transport: Transport):
    cmd = f"(yes a | head -c {FIVE_MB}) & (yes b | head -c {FIVE_MB} >&2) & wait; exit 3"
    result = transport.run(cmd, timeout_s=60, check=False)
    assert result.exit_code == 3
    assert (len(result.stdout), len(result.stderr)) == (FIVE_MB, FIVE_MB)
    assert result.stdout == "a\n" * (FIVE_MB // 2) and result.stderr == "b\n" * (FIVE_MB // 2)
    assert 0 < result.seconds < 30


def test_non_zero_exit_raises_naming_host_command_and_code(transport: Transport):
    with pytest.raises(CommandError) as raised:
        transport.run(["sh", "-c", "echo disk-full-detail >&2; exit 7"])
    message = str(raised.value)
    assert raised.value.exit_code == 7
    assert transport.name in message and "sh -c 'echo disk-full-detail >&2; exit 7'" in message
    assert "exited with 7" in message and "disk-full-detail" in message
    assert transport.run(["sh", "-c", "exit 7"], check=False).exit_code == 7


def test_timeout_kills_the_command_and_its_children(transport: Transport):
    started = time.monotonic()
    with pytest.raises(CommandTimeout) as raised:
        transport.run(["sh", "-c", "sleep 3170 & sleep 3171; wait"], timeout_s=1)
    elapsed = time.monotonic() - started
    assert 1 <= elapsed < 4, elapsed
    assert "timed out" in str(raised.value) and transport.name in str(raised.value)
    assert wait_until_gone("sleep 317[01]") == []


def test_arguments_reach_the_command_literally(transport: Transport):
    assert transport.run(["printf", "%s", NASTY]).stdout == NASTY
    assert transport.run(["sh", "-c", 'printf %s "$1"', "sh", NASTY]).stdout == NASTY
    assert transport.run('printf %s "$NASTY"', env={"NASTY": NASTY}).stdout == NASTY
    assert transport.run("echo one; echo two").stdout == "one\ntwo\n"  # a str is a shell snippet
    assert processes_matching("injected") == []
