"""The SSH transport: commands with deadlines and files over SFTP, on a connection that reconnects
(tasks/stage/ssh_connection.py: keys, host keys, retries).

Every command runs as `timeout -k 10 N sh -s` and its real text arrives on stdin: environment exports
(secret values never appear in a process list or a log) and then `exec <command> </dev/null`. Closing
an SSH channel does not stop a remote command, so the remote `timeout` is what kills it (TERM to its
whole process group, KILL 10 s later); a client-side deadline a little later catches a host where even
that fails. Retries happen only when the connection itself dropped: always when the command had not been
sent yet, otherwise only for calls marked idempotent.
"""

from __future__ import annotations

import math
import posixpath
import selectors
import socket
import threading
import time
from pathlib import Path
from typing import Callable, TypeVar

import paramiko

from tasks.stage.known_hosts import HostKeyRejected
from tasks.stage.shell import join, quote
from tasks.stage.ssh_connection import (
    AuthenticationFailed,
    SshConnection,
    close_quietly,
    log,
)
from tasks.stage.transport import (
    KILL_AFTER_S,
    LEASE_S,
    Command,
    CommandError,
    CommandResult,
    CommandTimeout,
    Env,
    ShortCopy,
    Transport,
    copy_resuming,
    display,
    reveal,
)

__all__ = ["AuthenticationFailed", "HostKeyRejected", "SshTransport"]

T = TypeVar("T")
DEADLINE_SLACK_S = KILL_AFTER_S + 5
_DROP_ERRORS = (EOFError, ConnectionError, socket.timeout, paramiko.SSHException)  # SFTP status errors excluded


class _Deadline(Exception):
    """The client-side deadline of a command passed."""


def _makedirs(sftp: paramiko.SFTPClient, path: str) -> None:
    """`mkdir -p` over SFTP."""
    try:
        if path not in ("", "/"):
            sftp.stat(path)
    except FileNotFoundError:
        _makedirs(sftp, posixpath.dirname(path))
        sftp.mkdir(path)


class SshTransport(SshConnection, Transport):
    """One host over one SSH connection (SshConnection): commands and files."""

    def lease_s(self) -> float:
        """The host's lease_s, else its reconnect time and a minute: an outage that ends in time stops nothing."""
        return self.host.lease_s or self.host.reconnect_s + LEASE_S

    # -- commands ---------------------------------------------------------------------------------
    def run(self, cmd: Command, timeout_s: float | None = None, check: bool = True, env: Env | None = None,
            idempotent: bool = False) -> CommandResult:
        """Run a command on the host; retried after a dropped connection only if `idempotent`."""
        timeout_s = timeout_s or self.host.command_timeout_s
        exports = "".join(f"export {k}={quote(v)}\n" for k, v in reveal(env).items())
        inner = join(cmd) if isinstance(cmd, list) else f"sh -c {quote(cmd)}"
        script = f"{exports}exec {inner} </dev/null\n".encode()
        remote = f"timeout -k {KILL_AFTER_S} {max(1, math.ceil(timeout_s))} sh -s"
        log.debug("%s: run %s (env names: %s)", self.name, display(cmd), sorted(env or {}))
        try:
            exit_code, out, err, seconds = self._retrying(
                display(cmd), lambda: self._run_once(remote, script, timeout_s), idempotent)
        except _Deadline:
            raise CommandTimeout(self.name, display(cmd), -1, "", f"gave no exit status {timeout_s:g} + "
                                 f"{DEADLINE_SLACK_S} s after its start; it may still run on the host") from None
        result = CommandResult(exit_code, out.decode(errors="replace"), err.decode(errors="replace"), seconds)
        log.debug("%s: exit %d after %.3f s", self.name, exit_code, seconds)
        if exit_code in (124, 137) and seconds >= timeout_s:
            raise CommandTimeout(self.name, display(cmd), exit_code, result.stderr,
                                 f"timed out after {timeout_s:g} s and was killed on the host")
        if check and exit_code != 0:
            raise CommandError(self.name, display(cmd), exit_code, result.stderr)
        return result

    def _run_once(self, remote: str, script: bytes, timeout_s: float) -> tuple[int, bytes, bytes, float]:
        started_at, chan, started = time.monotonic(), None, False
        transport = self._client.get_transport()
        # paramiko waits for the server's replies to open/exec without a limit: a silent peer gets closed.
        watchdog = threading.Timer(self.host.connect_timeout_s, transport.close)
        watchdog.start()
        try:
            chan = transport.open_session(timeout=2 * self.host.connect_timeout_s)
            started = True  # from here on the host may have run the command
            chan.exec_command(remote)
            chan.sendall(script)
            chan.shutdown_write()
            watchdog.cancel()
            exit_code, out, err = self._pump(chan, started_at + timeout_s + DEADLINE_SLACK_S)
        except _Deadline:
            self.close()  # a connection that kept a command past its deadline is not trusted again
            raise
        except _DROP_ERRORS as exc:
            self._raise_if_lost(exc, started)
            raise
        finally:
            watchdog.cancel()
            if chan is not None:
                close_quietly(chan)  # on a dropped connection, close() raises EOFError over the real error
        return exit_code, out, err, time.monotonic() - started_at

    def _pump(self, chan: paramiko.Channel, deadline: float) -> tuple[int, bytes, bytes]:
        """Read stdout and stderr as they come until the exit status arrives or the deadline passes.

        Both streams are drained on every wake-up, so neither can fill its window and stall the other.
        The channel's file descriptor wakes us for data and EOF; after EOF we wait on the exit status.
        """
        out, err = bytearray(), bytearray()
        with selectors.DefaultSelector() as selector:
            selector.register(chan, selectors.EVENT_READ)
            while True:
                while chan.recv_ready():
                    out += chan.recv(1 << 16)
                while chan.recv_stderr_ready():
                    err += chan.recv_stderr(1 << 16)
                drained = not chan.recv_ready() and not chan.recv_stderr_ready()
                if drained and chan.exit_status_ready() and (chan.eof_received or chan.closed):
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _Deadline
                if chan.eof_received:
                    chan.status_event.wait(min(remaining, 1.0))
                else:
                    selector.select(min(remaining, 1.0))
        if chan.exit_status == -1 and not self._alive(settle_s=1.0):  # -1 on a live one: killed by a signal
            raise EOFError("connection closed before the exit status arrived")
        return chan.recv_exit_status(), bytes(out), bytes(err)

    # -- files ------------------------------------------------------------------------------------
    def _sftp_client(self) -> paramiko.SFTPClient:
        with self._lock:
            if self._sftp is None:
                self._sftp = self._client.open_sftp()
                # No reply within this long counts as a dropped connection (a silent peer stalls forever).
                self._sftp.get_channel().settimeout(self.host.connect_timeout_s)
            return self._sftp

    def _file_op(self, what: str, op: Callable[[paramiko.SFTPClient], T]) -> T:
        def once() -> T:
            try:
                return op(self._sftp_client())
            except ShortCopy as exc:  # a read that met the end of a killed session's stream, not of the file
                self._raise_if_lost(exc, started=True)
                raise
            except (*_DROP_ERRORS, OSError) as exc:
                # paramiko's "Socket is closed" is a bare OSError (no errno), as is a generic SFTP failure, which
                # the liveness check then lets through; a status error with an errno (ENOENT, EACCES) is the file's
                if isinstance(exc, _DROP_ERRORS) or exc.errno is None:
                    self._raise_if_lost(exc, started=True)
                raise

        return self._retrying(what, once, idempotent=True)

    def put(self, local: Path, remote: str) -> None:
        """Upload to `remote.part`, then rename into place (parent directories are created)."""
        def upload(sftp: paramiko.SFTPClient) -> None:
            _makedirs(sftp, posixpath.dirname(remote))
            sftp.put(str(local), remote + ".part", confirm=True)
            sftp.posix_rename(remote + ".part", remote)

        self._file_op(f"put {local} {remote}", upload)

    def get(self, remote: str, local: Path) -> int:
        """Download with prefetch, resuming from `local.part` by size; return the bytes transferred."""

        def download(sftp: paramiko.SFTPClient) -> int:
            size = sftp.stat(remote).st_size

            def open_at(offset: int):
                handle = sftp.open(remote, "rb")
                handle.seek(offset)
                handle.prefetch(size)
                return handle

            return copy_resuming(size, open_at, Path(local))

        return self._file_op(f"get {remote} {local}", download)

    def exists(self, remote: str) -> bool:
        """Whether a path exists on the host."""

        def stat(sftp: paramiko.SFTPClient) -> bool:
            try:
                sftp.stat(remote)
                return True
            except FileNotFoundError:
                return False

        return self._file_op(f"exists {remote}", stat)


