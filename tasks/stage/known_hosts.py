"""OpenSSH known_hosts files as paramiko should read them, markers included, and host key fingerprints."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import paramiko

from tasks.stage.transport import TransportError


class HostKeyRejected(TransportError):
    """The server's host key is unknown or differs from the expected one; nothing was authenticated."""


def fingerprint(key: paramiko.PKey) -> str:
    """`SHA256:<base64 without padding>` of a public key, as `ssh-keygen -lf` prints it."""
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def load_known_hosts(client: paramiko.SSHClient, path: Path) -> set[str]:
    """Load an OpenSSH known_hosts file into the client; return the fingerprints it marks `@revoked`.

    paramiko reads neither marker (`@revoked`, `@cert-authority`: it fails with "Incorrect padding"), so
    the lines are read here: a revoked key is never trusted, even where another line lists it, and a
    certificate authority line is refused by name (host certificates are not supported).
    """
    revoked, entries = set(), []
    for number, raw in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        marker, _, rest = line.partition(" ") if line.startswith("@") else ("", "", line)
        if marker == "@cert-authority":
            raise HostKeyRejected(f"{path}:{number}: @cert-authority lines (host certificates) are not supported: "
                                  "list the host keys themselves")
        try:
            entry = paramiko.hostkeys.HostKeyEntry.from_line(rest.strip(), number)
        except (paramiko.hostkeys.InvalidHostKey, paramiko.SSHException, ValueError) as exc:
            raise HostKeyRejected(f"{path}:{number}: not a known_hosts line ({exc})") from None
        if marker == "@revoked":
            if entry is not None:
                revoked.add(fingerprint(entry.key))
        elif marker:
            raise HostKeyRejected(f"{path}:{number}: unknown marker {marker[:40]!r} (OpenSSH knows @revoked, @cert-authority)")
        elif entry is not None:
            entries.append(entry)
    keys = client.get_host_keys()
    for entry in entries:
        if fingerprint(entry.key) not in revoked:
            for name in entry.hostnames:
                keys.add(name, entry.key.get_name(), entry.key)
    return revoked
