"""A TCP proxy on 127.0.0.1 that a test can cut: every connection through it drops, new ones are refused.

Put between an SSH client and sshd, it is a network outage as the client sees one (the server side sees
its sessions end too), without touching sshd or the processes the sessions started.
"""

from __future__ import annotations

import socket
import threading
import time


class CuttableProxy:
    """Forwards a free port of 127.0.0.1 to `target_port`; `cut(seconds)` makes an outage that long."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._cut_until = 0.0
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.refused = 0  # connections refused during outages
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self, seconds: float) -> None:
        """Drop every connection now and refuse new ones for `seconds`."""
        with self._lock:
            self._cut_until = time.monotonic() + seconds
            for sock in self._open:
                _close(sock)
            self._open.clear()

    def close(self) -> None:
        self.cut(0)
        _close(self._listener)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            if time.monotonic() < self._cut_until:
                self.refused += 1
                _close(client)
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(1 << 16):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(source)
                self._open.discard(sink)
            _close(source)
            _close(sink)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
