"""A real local S3 endpoint for tests: moto in server mode, reached over HTTP, plus a fault injector.

`s3_endpoint` starts `moto_server` once per session on a free 127.0.0.1 port and stops it at the end.
`FaultProxy` sits between boto3 and moto and answers an S3 error (503 SlowDown by default) to a chosen
number of PUTs, or to everything while it is "down", forwarding every other request unchanged: the
store under test sees a real HTTP server refusing uploads, not a patched client.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ERRORS = {
    503: ("Slow Down", "SlowDown", "Please reduce your request rate."),
    500: ("Internal Server Error", "InternalError", "We encountered an internal error. Please try again."),
    403: ("Forbidden", "AccessDenied", "Access Denied"),
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _moto_command(port: int) -> list[str]:
    script = Path(sys.executable).with_name("moto_server")
    if script.exists():
        return [str(script), "-H", "127.0.0.1", "-p", str(port)]
    found = shutil.which("moto_server")
    if found:
        return [found, "-H", "127.0.0.1", "-p", str(port)]
    return [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]


class MotoServer:
    """One `moto_server` subprocess on 127.0.0.1; `stop()` and `start()` again keep the same port."""

    def __init__(self, log_path: Path, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self, timeout_s: float = 30.0) -> None:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            _moto_command(self.port), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {self.process.returncode}; see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.url}/moto-api/data.json", timeout=1):
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto_server did not answer on {self.url} within {timeout_s} s; see {self.log_path}")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a moto S3 server on 127.0.0.1, started once per test session."""
    server = MotoServer(tmp_path_factory.mktemp("moto") / "moto_server.log")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


class FaultProxy:
    """HTTP proxy on 127.0.0.1 in front of an S3 endpoint that refuses uploads on demand.

    `refuse_puts(n, status)`: the next n PUT requests get that S3 error (503 SlowDown, 500 InternalError
    or 403 AccessDenied). `down(True)`: every request gets 503 until `down(False)`. Counters say what
    happened: `puts_seen`, `refused`, `forwarded`.
    """

    def __init__(self, upstream: str) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        self._lock = threading.Lock()
        self._refuse_puts = 0
        self._status = 503
        self._down = False
        self.puts_seen = 0
        self.refused = 0
        self.forwarded = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fault-proxy", daemon=True
        )

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def refuse_puts(self, count: int, status: int = 503) -> None:
        with self._lock:
            self._refuse_puts, self._status = count, status

    def reset_counts(self) -> None:
        with self._lock:
            self.puts_seen = self.refused = self.forwarded = 0

    def down(self, is_down: bool) -> None:
        with self._lock:
            self._down = is_down

    def decide(self, method: str) -> int | None:
        """The error status to answer this request with, None to forward it; counts it either way."""
        with self._lock:
            if method == "PUT":
                self.puts_seen += 1
            if self._down:
                self.refused += 1
                return 503
            if method == "PUT" and self._refuse_puts > 0:
                self._refuse_puts -= 1
                self.refused += 1
                return self._status
            self.forwarded += 1
            return None


def _handler_for(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        _decided: int | None = None

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet test output
            pass

        def handle_expect_100(self) -> bool:
            # Decide before the client sends the body: a refused upload never gets "100 Continue".
            self._decided = proxy.decide(self.command) or 0
            if self._decided:
                self._refuse(self._decided)
                return False
            return super().handle_expect_100()

        def _read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _refuse(self, status: int) -> None:
            reason, code, message = ERRORS[status]
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                    f"<Message>{message}</Message></Error>").encode()
            self.send_response(status, reason)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.close_connection = True

        def _any(self) -> None:
            refuse = self._decided if self._decided is not None else proxy.decide(self.command)
            self._decided = None
            body = self._read_body()
            if refuse:
                self._refuse(refuse)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("expect", "transfer-encoding")}
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower() or body:
                headers["Content-Length"] = str(len(body))
            upstream = http.client.HTTPConnection(*proxy.upstream, timeout=60)
            try:
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                payload = response.read()
                self.send_response(response.status, response.reason)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(key, value)
                length = response.getheader("Content-Length") if self.command == "HEAD" else None
                self.send_header("Content-Length", length or str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
            finally:
                upstream.close()

        do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _any

    return Handler
