"""The local transport: the `Transport` interface with subprocess on this machine (the embedded demo stage)."""

from __future__ import annotations

import logging
import math
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from tasks.stage.transport import (
    KILL_AFTER_S,
    Command,
    CommandError,
    CommandResult,
    CommandTimeout,
    Env,
    LocalHost,
    Transport,
    copy_resuming,
    display,
    reveal,
)

log = logging.getLogger(__name__)
DEFAULT_TIMEOUT_S = 600.0


def _killpg(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


class LocalTransport(Transport):
    """Runs commands with subprocess, each in its own process group so a timeout kills all of it."""

    def __init__(self, host: LocalHost | None = None, name: str = "local"):
        self.host = host or LocalHost(role="sut")
        self.name = name

    def run(self, cmd: Command, timeout_s: float | None = None, check: bool = True, env: Env | None = None,
            idempotent: bool = False) -> CommandResult:
        """Run a command here; on timeout TERM its process group, then KILL it after a grace period."""
        timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        argv = list(cmd) if isinstance(cmd, list) else ["sh", "-c", cmd]
        full_env = {**os.environ, **reveal(env)} if env else None
        log.debug("%s: run %s (env names: %s)", self.name, display(cmd), sorted(env or {}))
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=full_env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            out, err = self._kill(proc)
            seconds = time.monotonic() - started
            raise CommandTimeout(self.name, display(cmd), proc.returncode, err.decode(errors="replace"),
                                 f"timed out after {math.ceil(seconds)} s (limit {timeout_s:g} s) and was killed")
        result = CommandResult(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"),
                               time.monotonic() - started)
        log.debug("%s: exit %d after %.3f s", self.name, result.exit_code, result.seconds)
        if check and result.exit_code != 0:
            raise CommandError(self.name, display(cmd), result.exit_code, result.stderr)
        return result

    @staticmethod
    def _kill(proc: subprocess.Popen) -> tuple[bytes, bytes]:
        """TERM the group, KILL it if it outlives the grace period; return what was printed by then."""
        _killpg(proc.pid, signal.SIGTERM)
        try:
            return proc.communicate(timeout=KILL_AFTER_S)
        except subprocess.TimeoutExpired:
            _killpg(proc.pid, signal.SIGKILL)
            try:
                return proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:  # a member left the group and still holds our pipes
                proc.kill()
                return b"", b""

    def put(self, local: Path, remote: str) -> None:
        """Copy a file into place on this machine (beside, then renamed)."""
        dest = Path(remote)
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        shutil.copyfile(local, part)
        part.replace(dest)

    def get(self, remote: str, local: Path) -> int:
        """Copy a file on this machine, resuming a partial `local.part`; return the bytes copied."""
        source = Path(remote)

        def open_at(offset: int):
            handle = open(source, "rb")
            handle.seek(offset)
            return handle

        return copy_resuming(source.stat().st_size, open_at, Path(local))

    def exists(self, remote: str) -> bool:
        """Whether a path exists on this machine."""
        return Path(remote).exists()
