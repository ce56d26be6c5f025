"""The run's lease on its hosts: a file the controller keeps touching while the run lives.

Every detached process (load, samplers, background services) starts with a watchdog beside it that stops
its group once the lease file is older than the lease (`Transport.lease`): when the controller crashes,
is cancelled without its teardown, or loses a host for good, nothing it started keeps running for longer
than that. The lease outlasts the transport's reconnect time, so an outage that ends in time stops nothing.
"""

from __future__ import annotations

import logging
import threading

from tasks.stage.transport import Transport

log = logging.getLogger(__name__)


class Lease:
    """Touches `path` on each host, a sixth of its lease apart, in one daemon thread per host."""

    def __init__(self, transports: dict[str, Transport], path: str):
        self.transports, self.path = transports, path
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        for transport in transports.values():
            transport.lease = (path, transport.lease_s())

    def start(self) -> None:
        """Renew from now on (the processes started before this still hold a fresh lease file)."""
        if not self._threads:
            self._threads = [threading.Thread(target=self._renew, args=(name,), name=f"lease-{name}", daemon=True)
                             for name in self.transports]
            for thread in self._threads:
                thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _renew(self, name: str) -> None:
        transport = self.transports[name]
        while not self._stop.wait(max(1.0, transport.lease[1] / 6)):
            try:
                transport.run(["touch", self.path], timeout_s=30, check=False, idempotent=True)
            except Exception as exc:  # an outage: the processes run on until the lease ends
                log.warning("lease: could not renew %s on %s: %s", self.path, name, exc)
