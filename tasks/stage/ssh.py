"""The SSH transport: paramiko with key authentication, a verified host key, deadlines and narrow retries.

Every command runs as `timeout -k 10 N sh -s` and its real text arrives on stdin: environment exports
(secret values never appear in a process list or a log) and then `exec <command> </dev/null`. Closing
an SSH channel does not stop a remote command, so the remote `timeout` is what kills it (TERM to its
whole process group, KILL 10 s later); a client-side deadline a little later catches a host where even
that fails. Retries happen only when the connection itself dropped: always when the command had not been
sent yet, otherwise only for calls marked idempotent. A first connection gets 4 attempts; once a host
was reached, a dropped connection is retried for `reconnect_s` (an SSH outage is not the end of a run:
the load runs detached), and each outage is noted in `outages` for the run record.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import logging
import math
import posixpath
import selectors
import shlex
import socket
import threading
import time
from pathlib import Path
from typing import Callable, TypeVar

import paramiko

from tasks.stage.transport import (
    KILL_AFTER_S,
    LEASE_S,
    Command,
    CommandError,
    CommandResult,
    CommandTimeout,
    ConnectionLost,
    Env,
    SshHost,
    Transport,
    TransportError,
    copy_resuming,
    display,
    reveal,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
BACKOFF_S = (0.5, 1.0, 2.0)  # pauses before the 2nd, 3rd and 4th attempt
RECONNECT_PAUSE_MAX_S = 4.0  # longest pause between reconnect attempts within reconnect_s
DEADLINE_SLACK_S = KILL_AFTER_S + 5
_CONNECT_ERRORS = (OSError, EOFError, paramiko.SSHException)  # refused, reset, timed out, banner lost
_DROP_ERRORS = (EOFError, ConnectionError, socket.timeout, paramiko.SSHException)  # SFTP status errors excluded


class _Deadline(Exception):
    """The client-side deadline of a command passed."""


class HostKeyRejected(TransportError):
    """The server's host key is unknown or differs from the expected one; nothing was authenticated."""


class AuthenticationFailed(TransportError):
    """The server refused our key."""


def fingerprint(key: paramiko.PKey) -> str:
    """`SHA256:<base64 without padding>` of a public key, as `ssh-keygen -lf` prints it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def load_private_key(text: str) -> paramiko.PKey:
    """A paramiko key from OpenSSH or PEM private key text (ed25519, ECDSA or RSA, no passphrase)."""
    for key_class in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
        try:
            return key_class.from_private_key(io.StringIO(text))
        except (paramiko.SSHException, ValueError):  # another type, or encrypted
            continue
    raise TransportError("the private key is not an unencrypted ed25519, ECDSA or RSA key")


class _HostKeyPolicy(paramiko.MissingHostKeyPolicy):
    """Decides on a host key absent from known_hosts: the pinned fingerprint, explicit trust, or refusal."""

    def __init__(self, host: SshHost, name: str):
        self.host, self.name = host, name

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        seen = fingerprint(key)
        if self.host.host_key_fingerprint:
            if not hmac.compare_digest(seen, self.host.host_key_fingerprint):
                raise HostKeyRejected(f"{self.name}: host key of {hostname} is {seen}, "
                                      f"expected pinned {self.host.host_key_fingerprint}")
        elif self.host.accept_unknown_host_key:
            log.warning("%s: accepting unknown host key %s %s (accept_unknown_host_key)",
                        self.name, key.get_name(), seen)
        else:
            where = self.host.known_hosts or "known_hosts"
            raise HostKeyRejected(f"{self.name}: host key {key.get_name()} {seen} of {hostname} is not in {where}")
        client.get_host_keys().add(hostname, key.get_name(), key)


def _clock(moment: float) -> str:
    """A wall-clock time as HH:MM:SS UTC, for the run record."""
    return time.strftime("%H:%M:%S UTC", time.gmtime(moment))


def _makedirs(sftp: paramiko.SFTPClient, path: str) -> None:
    """`mkdir -p` over SFTP."""
    try:
        if path not in ("", "/"):
            sftp.stat(path)
    except FileNotFoundError:
        _makedirs(sftp, posixpath.dirname(path))
        sftp.mkdir(path)


class SshTransport(Transport):
    """One host over one SSH connection, opened on first use and reopened after a drop."""

    def __init__(self, host: SshHost, name: str | None = None):
        self.host = host
        self.name = name or f"{host.user}@{host.address}:{host.port}"
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._lock = threading.RLock()
        self._reached = False  # connected once: a later drop is retried for reconnect_s
        self._lost_at: float | None = None  # wall-clock time the connection was found dropped
        self.outages: list[str] = []  # "connection lost at ..., back after N s", one per outage

    def lease_s(self) -> float:
        """The host's lease_s, else its reconnect time and a minute: an outage that ends in time stops nothing."""
        return self.host.lease_s or self.host.reconnect_s + LEASE_S

    # -- connection -------------------------------------------------------------------------------
    def connect(self) -> None:
        """Connect unless connected, retrying network errors (never key or auth failures): 4 attempts for the
        first connection, then for `reconnect_s` after a drop."""
        with self._lock:
            if self._alive():
                return
            if self._client is not None:  # it was open and died
                self._lost_at = self._lost_at or time.time()
            lost_at = self._lost_at
            self._close()
            known_hosts = self._known_hosts()
            pkey = load_private_key(self.host.private_key().get_secret_value())
            deadline = time.monotonic() + self.host.reconnect_s if self._reached else None
            attempt = 0
            while True:
                attempt += 1
                try:
                    self._client = self._connect_once(known_hosts, pkey)
                    break
                except paramiko.BadHostKeyException as exc:  # never retried, like the two below
                    raise HostKeyRejected(f"{self.name}: host key {fingerprint(exc.key)} differs from "
                                          f"{fingerprint(exc.expected_key)} in {known_hosts}") from None
                except paramiko.AuthenticationException as exc:
                    raise AuthenticationFailed(f"{self.name}: key refused for {self.host.user}: {exc}") from None
                except _CONNECT_ERRORS as exc:
                    pause = self._pause(attempt, deadline)
                    if pause is None:
                        since = f" since {_clock(lost_at)}" if lost_at else ""
                        raise ConnectionLost(f"{self.name}: could not connect{since} after {attempt} attempts: {exc}",
                                             retry_safe=True) from exc
                    log.warning("%s: connect attempt %d failed (%s); retrying in %.1f s", self.name, attempt,
                                exc, pause)
                    time.sleep(pause)
            if lost_at is not None:
                self.outages.append(f"connection lost at {_clock(lost_at)}, back after "
                                    f"{time.time() - lost_at:.1f} s ({attempt} connect attempts)")
            self._reached, self._lost_at = True, None

    @staticmethod
    def _pause(attempt: int, deadline: float | None) -> float | None:
        """The pause before the next connect attempt, or None when no attempt is left."""
        if deadline is None:
            return BACKOFF_S[attempt - 1] if attempt <= len(BACKOFF_S) else None
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        return min(RECONNECT_PAUSE_MAX_S, 0.5 * 2 ** (attempt - 1), remaining)

    def _known_hosts(self) -> Path | None:
        if self.host.known_hosts is None:
            return None
        path = self.host.known_hosts.expanduser()
        if not path.is_file():
            raise HostKeyRejected(f"{self.name}: known_hosts file {path} does not exist")
        return path

    def _connect_once(self, known_hosts: Path | None, pkey: paramiko.PKey) -> paramiko.SSHClient:
        host, client = self.host, paramiko.SSHClient()
        try:
            if known_hosts is not None:
                client.load_host_keys(str(known_hosts))
            client.set_missing_host_key_policy(_HostKeyPolicy(host, self.name))
            # paramiko checks the host key (known_hosts, else the policy) before it authenticates.
            client.connect(host.address, port=host.port, username=host.user, pkey=pkey,
                           allow_agent=False, look_for_keys=False, timeout=host.connect_timeout_s,
                           banner_timeout=host.connect_timeout_s, auth_timeout=host.connect_timeout_s,
                           channel_timeout=host.connect_timeout_s)
        except BaseException:
            client.close()
            raise
        transport = client.get_transport()
        transport.set_keepalive(host.keepalive_s)
        log.info("%s: connected to %s@%s:%d, host key %s", self.name, host.user, host.address, host.port,
                 fingerprint(transport.get_remote_server_key()))
        return client

    def _alive(self, settle_s: float = 0) -> bool:
        """Whether the connection is up; `settle_s` lets paramiko's reader thread notice a drop first
        (it closes the channels before it marks the transport inactive)."""
        transport = self._client.get_transport() if self._client else None
        if transport is not None and transport.is_active() and settle_s:
            transport.join(settle_s)
        return bool(transport and transport.is_active())

    def close(self) -> None:
        """Close the SFTP session and the connection."""
        with self._lock:
            self._lost_at = None
            self._close()

    def _close(self) -> None:
        with self._lock:
            for closable in (self._sftp, self._client):
                if closable is not None:
                    _close_quietly(closable)
            self._sftp, self._client = None, None

    def _retrying(self, what: str, op: Callable[[], T], idempotent: bool) -> T:
        """Run `op`, repeating it after a dropped connection if it had not started or is idempotent."""
        for attempt, pause in enumerate((*BACKOFF_S, None), start=1):
            self.connect()  # retries on its own; a host that stays unreachable ends the operation
            try:
                return op()
            except ConnectionLost as exc:
                self._lost_at = self._lost_at or time.time()
                self._close()
                if not (exc.retry_safe or idempotent):
                    raise ConnectionLost(f"{exc}; not retried: `{what}` may have run and is not marked "
                                         "idempotent", retry_safe=False) from exc
                if pause is None:
                    raise
                log.warning("%s: connection lost during `%s` (attempt %d); reconnecting in %.1f s",
                            self.name, what, attempt, pause)
                time.sleep(pause)
        raise AssertionError("unreachable")

    def _raise_if_lost(self, exc: BaseException, started: bool) -> None:
        """Raise ConnectionLost if the connection is gone or silent; otherwise return so `exc` propagates."""
        silent = isinstance(exc, (EOFError, ConnectionError, socket.timeout))
        if not isinstance(exc, paramiko.ChannelException) and (silent or not self._alive(settle_s=1.0)):
            raise ConnectionLost(f"{self.name}: connection lost: {exc or type(exc).__name__}",
                                 retry_safe=not started) from exc

    # -- commands ---------------------------------------------------------------------------------
    def run(self, cmd: Command, timeout_s: float | None = None, check: bool = True, env: Env | None = None,
            idempotent: bool = False) -> CommandResult:
        """Run a command on the host; retried after a dropped connection only if `idempotent`."""
        timeout_s = timeout_s or self.host.command_timeout_s
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in reveal(env).items())
        inner = shlex.join(cmd) if isinstance(cmd, list) else f"sh -c {shlex.quote(cmd)}"
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
                _close_quietly(chan)  # on a dropped connection, close() raises EOFError over the real error
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
            except _DROP_ERRORS as exc:
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


def _close_quietly(closable) -> None:
    """Close a channel, SFTP session or client that may sit on a dead connection: it is gone either way."""
    try:
        closable.close()
    except Exception:  # noqa: BLE001 - EOFError, socket errors, SSHException: nothing left to close
        pass
