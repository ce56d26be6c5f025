"""A real OpenSSH sshd on 127.0.0.1 for the transport tests: fresh host and client keys, its own port.

Use it by importing the fixture into a conftest (`from tests.integration.sshd import sshd`); pytest rejects
`pytest_plugins` in a conftest below the rootdir. The server runs in the foreground (`-D -e`) as root,
logs to `sshd.log` in its folder and is stopped at the end of the session.
"""

from __future__ import annotations

import getpass
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tasks.stage.transport import SshHost

SSHD = Path("/usr/sbin/sshd")
SFTP_SERVER = Path("/usr/lib/openssh/sftp-server")
INSTALL_HINT = "install OpenSSH server: apt-get install -y openssh-server"


@dataclass
class Sshd:
    """A running sshd and everything a client needs to reach it."""

    address: str
    port: int
    user: str
    folder: Path
    client_key: Path
    known_hosts: Path
    host_key_fingerprint: str
    other_key: Path  # a second ed25519 key: neither the host key nor authorized
    process: subprocess.Popen

    @property
    def log_text(self) -> str:
        """Everything sshd logged so far."""
        return (self.folder / "sshd.log").read_text(errors="replace")

    def ssh_host(self, **overrides) -> SshHost:
        """An SshHost for this server (key file + known_hosts unless overridden)."""
        fields = dict(address=self.address, port=self.port, user=self.user, role="sut",
                      key_file=self.client_key, known_hosts=self.known_hosts, connect_timeout_s=5)
        fields.update(overrides)
        return SshHost(**{k: v for k, v in fields.items() if v is not None})

    def session_pids(self) -> list[int]:
        """The per-connection sshd processes: the listener's descendants that are sshd (not user commands)."""
        found, parents = [], [self.process.pid]
        while parents:
            listed = subprocess.run(["pgrep", "-P", ",".join(map(str, parents))], capture_output=True, text=True)
            parents = [int(pid) for pid in listed.stdout.split()]
            found += [pid for pid in parents if _command_name(pid).startswith("sshd")]
        return found

    def signal_sessions(self, signum: int) -> list[int]:
        """Send `signum` to every per-connection sshd process still alive; returns the pids it reached.

        A session of an earlier test may end between the listing and the signal: it is not ours to stop.
        """
        reached = []
        for pid in self.session_pids():
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                continue
            reached.append(pid)
        return reached

    def drop_sessions(self) -> list[int]:
        """SIGKILL every per-connection sshd process (monitor and session alike): connections drop at once."""
        return self.signal_sessions(signal.SIGKILL)


def _command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().split()[1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, within_s: float = 10) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd did not listen on {port} within {within_s} s:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """A real sshd on a free port of 127.0.0.1, with a client key authorized and a known_hosts for it."""
    if not SSHD.exists():
        pytest.fail(INSTALL_HINT, pytrace=False)
    folder = tmp_path_factory.mktemp("sshd")
    host_pub = _keygen(folder / "host_ed25519")
    client_pub = _keygen(folder / "client_ed25519")
    _keygen(folder / "other_ed25519")
    (folder / "authorized_keys").write_text(f"ssh-ed25519 {client_pub} perfcampaign-test\n")
    port, user = _free_port(), getpass.getuser()
    (folder / "known_hosts").write_text(f"[127.0.0.1]:{port} ssh-ed25519 {host_pub}\n")
    listed = subprocess.run(["ssh-keygen", "-lf", str(folder / "host_ed25519.pub")], capture_output=True,
                            text=True, check=True).stdout.split()[1]
    sftp = SFTP_SERVER if SFTP_SERVER.exists() else "internal-sftp"
    (folder / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder}/host_ed25519\n"
        f"AuthorizedKeysFile {folder}/authorized_keys\nPidFile {folder}/sshd.pid\n"
        "UsePAM no\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        f"PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAllowUsers {user}\n"
        f"Subsystem sftp {sftp}\nLogLevel VERBOSE\nMaxStartups 50\nMaxSessions 50\n"
    )
    Path("/run/sshd").mkdir(mode=0o755, parents=True, exist_ok=True)  # privilege separation directory
    log = folder / "sshd.log"
    with open(log, "wb") as log_handle:
        process = subprocess.Popen([str(SSHD), "-f", str(folder / "sshd_config"), "-D", "-e"],
                                   stdin=subprocess.DEVNULL, stdout=log_handle, stderr=subprocess.STDOUT)
    try:
        _wait_for_port(port, process, log)
        yield Sshd("127.0.0.1", port, user, folder, folder / "client_ed25519", folder / "known_hosts", listed,
                   folder / "other_ed25519", process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
