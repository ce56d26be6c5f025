"""Detached processes: started in their own session, found by pid file, stopped as a whole group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tasks.stage.transport import CommandError, Transport
from tests.integration.ssh.conftest import wait_until_gone


def group_members(pgid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def live_group_members(pgid: int) -> list[int]:
    """The group's members that are not zombies (where nobody reaps orphans, a killed member stays one)."""
    found = subprocess.run(["ps", "-e", "-o", "pid=", "-o", "pgid=", "-o", "stat="], capture_output=True, text=True)
    return [int(pid) for pid, group, stat in (line.split() for line in found.stdout.splitlines())
            if int(group) == pgid and not stat.startswith("Z")]


def test_a_group_that_ignores_term_is_killed(transport: Transport, tmp_path: Path):
    workdir = str(tmp_path / "run dir")  # a space on purpose
    pid = transport.start_detached("stubborn", ["sh", "-c", "trap '' TERM; sleep 3190 & sleep 3191; wait"], workdir)
    assert (tmp_path / "run dir" / "stubborn.pid").read_text().strip() == str(pid)
    time.sleep(0.3)
    assert len(group_members(pid)) >= 3  # sh and both sleeps share the group
    assert transport.is_running("stubborn", workdir)
    with pytest.raises(CommandError, match="already running"):
        transport.start_detached("stubborn", ["sleep", "1"], workdir)
    started = time.monotonic()
    assert transport.stop_detached("stubborn", workdir, grace_s=1) == "killed"
    assert 1 <= time.monotonic() - started < 5
    assert not transport.is_running("stubborn", workdir)
    assert wait_until_gone("sleep 319[01]") == []
    assert not (tmp_path / "run dir" / "stubborn.pid").exists()


def test_a_group_that_obeys_term_stops_fast_and_keeps_its_log(transport: Transport, tmp_path: Path):
    workdir = str(tmp_path)
    transport.start_detached("svc", "echo started; echo to-stderr >&2; exec sleep 3192", workdir)
    time.sleep(0.3)
    assert transport.is_running("svc", workdir)
    started = time.monotonic()
    assert transport.stop_detached("svc", workdir, grace_s=5) == "terminated"
    assert time.monotonic() - started < 2
    assert (tmp_path / "svc.log").read_text() == "started\nto-stderr\n"
    assert transport.stop_detached("svc", workdir) == "absent"
    assert not transport.is_running("never-started", workdir)
    assert wait_until_gone("sleep 3192") == []


def test_a_process_that_exits_is_not_running(transport: Transport, tmp_path: Path):
    transport.start_detached("brief", ["true"], str(tmp_path))
    deadline = time.monotonic() + 3
    while transport.is_running("brief", str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not transport.is_running("brief", str(tmp_path))  # even where nobody reaps the zombie


def test_names_are_checked(transport: Transport, tmp_path: Path):
    with pytest.raises(ValueError):
        transport.start_detached("../escape", ["true"], str(tmp_path))


def test_a_process_stops_itself_once_its_lease_is_not_renewed(transport: Transport, tmp_path: Path):
    lease = tmp_path / "lease"
    transport.lease = (str(lease), 2)
    transport.start_detached("leased", "exec sleep 3194", str(tmp_path))
    for _ in range(4):  # renewed for 4 s, twice the lease: it runs on
        time.sleep(1)
        lease.touch()
    assert transport.is_running("leased", str(tmp_path))
    started = time.monotonic()  # no renewal from here on: a controller gone, or a host it cannot reach
    while transport.is_running("leased", str(tmp_path)) and time.monotonic() - started < 15:
        time.sleep(0.2)
    assert 1.5 < time.monotonic() - started < 6
    assert wait_until_gone("sleep 3194") == []
    assert "lease" in (tmp_path / "leased.log").read_text() and "not renewed" in (tmp_path / "leased.log").read_text()


def test_a_lease_watchdog_ends_with_its_process(transport: Transport, tmp_path: Path):
    transport.lease = (str(tmp_path / "lease"), 60)
    transport.start_detached("short", "sleep 0.5; echo done", str(tmp_path))
    deadline = time.monotonic() + 5
    while transport.is_running("short", str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not transport.is_running("short", str(tmp_path))  # the watchdog left with it (within its 1 s tick)
    assert (tmp_path / "short.log").read_text() == "done\n"


def test_a_process_that_died_is_not_running_while_its_watchdog_lives_on(transport: Transport, tmp_path: Path):
    # The watchdog is frozen, so it cannot leave with the process: only it (and its one child, `sleep 1`, at most)
    # is left in the group. The check after an iteration must say the process is gone, and stopping it must say it
    # had ended on its own, then stop what is left.
    transport.lease = (str(tmp_path / "lease"), 60)
    (tmp_path / "lease").touch()
    pid = transport.start_detached("svc", "exec sleep 3196", str(tmp_path))
    watchdog_file = tmp_path / "svc.watchdog"
    deadline = time.monotonic() + 5
    while not watchdog_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    watchdog = int(watchdog_file.read_text())
    assert watchdog != pid and watchdog in live_group_members(pid)
    assert transport.is_running("svc", str(tmp_path))
    os.kill(watchdog, signal.SIGSTOP)
    os.kill(pid, signal.SIGKILL)
    assert wait_until_gone("sleep 3196") == []
    assert watchdog in live_group_members(pid)  # the group lives on: the old check counted it as running
    assert not transport.is_running("svc", str(tmp_path))
    assert transport.stop_detached("svc", str(tmp_path), grace_s=1) == "ended"
    assert live_group_members(pid) == []
    assert not (tmp_path / "svc.pid").exists() and not watchdog_file.exists()
    assert transport.stop_detached("svc", str(tmp_path)) == "absent"


def test_a_process_that_ended_unwatched_is_said_to_have_ended(transport: Transport, tmp_path: Path):
    transport.start_detached("brief", ["true"], str(tmp_path))
    deadline = time.monotonic() + 3
    while transport.is_running("brief", str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert transport.stop_detached("brief", str(tmp_path)) == "ended"
    assert transport.stop_detached("brief", str(tmp_path)) == "absent"
