"""From a host's config to its transport: the one place that knows both kinds of transport."""

from __future__ import annotations

from tasks.stage.local import LocalTransport
from tasks.stage.ssh import SshTransport
from tasks.stage.transport import LocalHost, SshHost, Transport


def open_transport(host: SshHost | LocalHost, name: str) -> Transport:
    """The transport for one configured host (not yet connected)."""
    if isinstance(host, SshHost):
        return SshTransport(host, name)
    return LocalTransport(host, name)
