"""SSH connections: key authentication, a verified host key, and reconnecting after a drop.

A first connection gets 4 attempts; once a host was reached, a dropped connection is retried for
`reconnect_s` (an SSH outage is not the end of a run: the load runs detached), and each outage is noted
in `outages` for the run record. An operation is repeated after a drop only when it had not started or
is idempotent (`_retrying`). Commands and files over the connection: tasks/stage/ssh.py.
"""

from __future__ import annotations

import hmac
import io
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Callable, TypeVar

import paramiko

from tasks.stage.known_hosts import HostKeyRejected, fingerprint, load_known_hosts
from tasks.stage.transport import ConnectionLost, SshHost, TransportError

log = logging.getLogger("tasks.stage.ssh")  # one logger for the SSH transport, whichever module logs
T = TypeVar("T")
BACKOFF_S = (0.5, 1.0, 2.0)  # pauses before the 2nd, 3rd and 4th attempt
RECONNECT_PAUSE_MAX_S = 4.0  # longest pause between reconnect attempts within reconnect_s
_CONNECT_ERRORS = (OSError, EOFError, paramiko.SSHException)  # refused, reset, timed out, banner lost


class AuthenticationFailed(TransportError):
    """The server refused our key."""


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

    def __init__(self, host: SshHost, name: str, revoked: set[str] = frozenset()):
        self.host, self.name, self.revoked = host, name, revoked

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        seen = fingerprint(key)
        if seen in self.revoked:
            raise HostKeyRejected(f"{self.name}: host key {key.get_name()} {seen} of {hostname} is marked @revoked "
                                  f"in {self.host.known_hosts}")
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


class SshConnection:
    """One host's SSH connection, opened on first use and reopened after a drop."""

    def __init__(self, host: SshHost, name: str | None = None):
        self.host = host
        self.name = name or f"{host.user}@{host.address}:{host.port}"
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._lock = threading.RLock()
        self._reached = False  # connected once: a later drop is retried for reconnect_s
        self._lost_at: float | None = None  # wall-clock time the connection was found dropped
        self.outages: list[str] = []  # "connection lost at ..., back after N s", one per outage

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
            revoked = load_known_hosts(client, known_hosts) if known_hosts is not None else set()
            client.set_missing_host_key_policy(_HostKeyPolicy(host, self.name, revoked))
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
                    close_quietly(closable)
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



def close_quietly(closable) -> None:
    """Close a channel, SFTP session or client that may sit on a dead connection: it is gone either way."""
    try:
        closable.close()
    except Exception:  # noqa: BLE001 - EOFError, socket errors, SSHException: nothing left to close
        pass
