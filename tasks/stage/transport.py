"""Host transports: the interface every transport implements, the host config models and their errors.

Campaign files describe hosts as `name -> {transport: ssh|local, ...}`; `HostConfig` validates one entry
and `tasks/stage/hosts.py` turns it into a `Transport`. This module imports neither paramiko nor Prefect, so
the campaign spec can validate hosts cheaply; `ssh.py` and `local.py` beside it do the I/O.
Detached processes are plain shell scripts run through `Transport.run`, so both transports share them.
"""

from __future__ import annotations

import math
import os
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, BinaryIO, Callable, Literal, Mapping, Sequence, Union

from pydantic import (
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from tasks.bundle.strict import StrictModel
from tasks.stage.shell import join, quote

Command = Union[list[str], str]
Env = Mapping[str, Union[str, SecretStr]]
Role = Literal["sut", "loadgen", "dependency"]
LEASE_S = 60.0  # a local host's lease; an SSH host's is its reconnect_s + this unless it sets lease_s
KILL_AFTER_S = 10  # a command still alive this long after its timeout's TERM gets KILL
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FINGERPRINT = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}$")


class TransportError(RuntimeError):
    """A host could not be reached, authenticated or used."""


class StageError(RuntimeError):
    """The stage could not be brought up, or fell apart during the run: a host or service not ready, a sampler
    without its process, a background process no longer running. The input's or the stage's, not a bug (exit 1)."""


class CommandError(TransportError):
    """A command exited non-zero; names the host, the command, the exit code and the tail of stderr."""

    def __init__(self, host: str, command: str, exit_code: int, stderr: str, what: str = ""):
        self.host, self.command, self.exit_code = host, command, exit_code
        self.stderr_tail = stderr[-2000:]
        what = what or f"exited with {exit_code}"
        super().__init__(f"{host}: `{command}` {what}; stderr tail: {self.stderr_tail.strip() or '(empty)'}")


class CommandTimeout(CommandError):
    """A command ran past its timeout and was killed."""


class ShortCopy(TransportError):
    """A copy ended before the file's size: the source shrank, or its connection closed as if at the end."""


class ConnectionLost(TransportError):
    """The connection dropped; `retry_safe` says whether repeating the operation cannot do harm."""

    def __init__(self, message: str, retry_safe: bool):
        super().__init__(message)
        self.retry_safe = retry_safe


@dataclass(frozen=True)
class CommandResult:
    """What a finished command printed and returned."""

    exit_code: int
    stdout: str
    stderr: str
    seconds: float


class _HostBase(StrictModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Role


class LocalHost(_HostBase):
    """This machine, reached with subprocess (the embedded demo stage)."""

    transport: Literal["local"] = "local"


class SshHost(_HostBase):
    """A stage host reached over SSH with key authentication and a verified host key."""

    transport: Literal["ssh"] = "ssh"
    address: str
    port: int = Field(22, ge=1, le=65535)
    user: str
    key_file: Path | None = None
    key_env: str | None = None
    key_secret_block: str | None = None
    known_hosts: Path | None = None
    host_key_fingerprint: str | None = None
    accept_unknown_host_key: bool = False
    connect_timeout_s: float = Field(15.0, gt=0)
    command_timeout_s: float = Field(600.0, gt=0)
    keepalive_s: int = Field(15, ge=0)
    # after a drop, how long to keep trying to reconnect (a detached load runs on meanwhile)
    reconnect_s: float = Field(120.0, ge=0)
    # how long processes started here run on without the controller (default: reconnect_s + 60)
    lease_s: float | None = Field(None, gt=0)

    @field_validator("host_key_fingerprint")
    @classmethod
    def _fingerprint_format(cls, value: str | None) -> str | None:
        if value is not None and not _FINGERPRINT.match(value.rstrip("=")):
            raise ValueError("expected 'SHA256:' and 43 base64 characters, as `ssh-keygen -lf` prints")
        return value.rstrip("=") if value else value

    @model_validator(mode="after")
    def _one_key_one_check(self) -> "SshHost":
        keys = [k for k in ("key_file", "key_env", "key_secret_block") if getattr(self, k) is not None]
        if len(keys) != 1:
            raise ValueError(f"give exactly one of key_file, key_env, key_secret_block (got {keys or 'none'})")
        if self.known_hosts is not None and self.host_key_fingerprint is not None:
            raise ValueError("give known_hosts or host_key_fingerprint, not both")
        if self.known_hosts is None and self.host_key_fingerprint is None and not self.accept_unknown_host_key:
            raise ValueError("give known_hosts or host_key_fingerprint (or accept_unknown_host_key: true)")
        return self

    def private_key(self) -> SecretStr:
        """The private key text, read only now: from the file, the environment or a Prefect Secret block."""
        if self.key_file is not None:
            return SecretStr(self.key_file.expanduser().read_text())
        if self.key_env is not None:
            text = os.environ.get(self.key_env)
            if not text:
                raise TransportError(f"environment variable {self.key_env} (private key) is not set")
            return SecretStr(text)
        from prefect.blocks.system import (
            Secret,  # lazy: costs ~1 s and may talk to the Prefect API
        )

        return SecretStr(str(Secret.load(self.key_secret_block).get()))


HostConfig = Annotated[Union[SshHost, LocalHost], Field(discriminator="transport")]


def display(cmd: Command) -> str:
    """The command as one shell-quoted line, for logs and errors (environment values never included)."""
    return join(cmd) if isinstance(cmd, list) else cmd


def reveal(env: Env | None) -> dict[str, str]:
    """Plain values of an environment mapping, its names checked; only for handing to the command."""
    out = {}
    for name, value in (env or {}).items():
        if not _ENV_NAME.match(name):
            raise ValueError(f"not an environment variable name: {name!r}")
        out[name] = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
    return out


def copy_resuming(size: int, open_source: Callable[[int], BinaryIO], local: Path) -> int:
    """Copy `size` bytes into `local`, resuming from `local.part` by its size; return bytes copied.

    A `.part` file no larger than the source is taken as a prefix already fetched (logs only grow), so
    the copy continues at its size; a larger one is discarded. The `.part` is renamed only once complete.
    """
    local.parent.mkdir(parents=True, exist_ok=True)
    part = local.with_name(local.name + ".part")
    offset = part.stat().st_size if part.exists() else 0
    if offset > size:
        offset = 0
    copied = 0
    with open_source(offset) as src, open(part, "ab" if offset else "wb") as dst:
        while chunk := src.read(min(1 << 20, size - offset - copied)):
            dst.write(chunk)
            copied += len(chunk)
    if part.stat().st_size != size:
        raise ShortCopy(f"short copy into {local}: {part.stat().st_size} of {size} bytes")
    part.replace(local)
    return copied


# Shell snippets shared by both transports. `alive PGID` says whether a group has a member that is not a zombie:
# where PID 1 does not reap orphans (containers), `kill -0` alone would report dead processes alive.
# `alive PGID WATCHDOG_PID_FILE` asks it of the process itself: the group without its lease watchdog (pid in that
# file) and the watchdog's children, which outlive the process by up to the watchdog's one-second tick; a death in
# that second went unseen by the check after an iteration.
_ALIVE = (
    "alive() { w=; [ -z \"$2\" ] || w=$(cat \"$2\" 2>/dev/null); kill -0 \"-$1\" 2>/dev/null && "
    "ps -e -o pid= -o ppid= -o pgid= -o stat= | awk -v g=\"$1\" -v w=\"$w\" "
    "'{pp[$1] = $2; pg[$1] = $3; st[$1] = $4} END {for (p in pg) if (pg[p] == g && st[p] !~ /^Z/) "
    "{q = p; while (q != w && pg[q] == g) q = pp[q]; if (w == \"\" || q != w) {f = 1; break}} exit !f}'; }; "
)
_READ_PID = (
    "pid=$(cat {pidf}); case $pid in ''|*[!0-9]*) echo bad pid file {pidf} >&2; exit 2;; esac; "
    "[ \"$pid\" -gt 1 ] || {{ echo bad pid \"$pid\" in {pidf} >&2; exit 2; }}; "  # `kill -TERM -1` would signal every process
)


def _watchdog(lease: str, lease_s: float, watchdog_pidf: str) -> str:
    """A loop beside the process (in its group) that stops the group once `lease` is older than `lease_s`
    or gone: a controller that crashed, or a host it cannot reach any more, leaves nothing running for long.
    It ends with the process (the group's leader, `$$` after the exec), and writes its own pid to
    `watchdog_pidf` (shell-quoted) so that a check of the process can leave it out."""
    path = quote(lease)
    loop = (
        f"echo $$ > {watchdog_pidf}; up() {{ s=$(ps -o stat= -p $1 2>/dev/null) && case $s in Z*) false;; esac; }}; "
        f"while up $1; do m=$(stat -c %Y {path} 2>/dev/null) || m=0; age=$(( $(date +%s) - m )); "
        f"if [ $age -gt {max(1, math.ceil(lease_s))} ]; then "
        f"echo \"lease {lease} not renewed for $age s: stopping\" >&2; "
        "kill -TERM -$1; sleep 5; kill -KILL -$1; exit 0; fi; sleep 1; done"
    )
    return f"( exec sh -c {quote(loop)} watchdog $$ ) </dev/null & "


def _paths(name: str, workdir: str) -> tuple[str, str, str, str]:
    """The work folder, log, pid file and watchdog's pid file of a detached process, shell-quoted."""
    if not _NAME.match(name):
        raise ValueError(f"detached process name must match {_NAME.pattern}: {name!r}")
    base = workdir.rstrip("/") or "/"
    return quote(base), quote(f"{base}/{name}.log"), quote(f"{base}/{name}.pid"), quote(f"{base}/{name}.watchdog")


class Transport(ABC):
    """Runs commands and copies files on one host; use as a context manager."""

    name: str
    outages: Sequence[str] = ()  # connection outages survived so far, as sentences (SSH notes them)
    # (file, seconds): detached processes stop themselves once the file is that old (see tasks/stage/lease.py)
    lease: tuple[str, float] | None = None

    @abstractmethod
    def run(self, cmd: Command, timeout_s: float | None = None, check: bool = True, env: Env | None = None,
            idempotent: bool = False) -> CommandResult:
        """Run a command (a list is shell-quoted; a str is a shell snippet); a timeout always raises."""

    @abstractmethod
    def put(self, local: Path, remote: str) -> None:
        """Copy a local file to the host (written beside, then renamed into place)."""

    @abstractmethod
    def get(self, remote: str, local: Path) -> int:
        """Copy a file from the host, resuming a partial `local.part`; return the bytes transferred."""

    @abstractmethod
    def exists(self, remote: str) -> bool:
        """Whether a path exists on the host."""

    def lease_s(self) -> float:
        """How long the processes started here outlive a controller that stopped renewing its lease."""
        return LEASE_S

    def connect(self) -> None:
        """Open the connection now rather than on first use."""

    def close(self) -> None:
        """Release the connection."""

    def __enter__(self) -> "Transport":
        self.connect()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start_detached(self, name: str, cmd: Command, workdir: str) -> int:
        """Start `cmd` in its own session (setsid nohup), output to `workdir/name.log`; return its pid."""
        wd, log, pidf, watchdog_pidf = _paths(name, workdir)
        inner = join(cmd) if isinstance(cmd, list) else f"sh -c {quote(cmd)}"
        renew = ""
        if self.lease is not None:
            inner = f"sh -c {quote(_watchdog(*self.lease, watchdog_pidf) + ' exec ' + inner)}"
            renew = f"touch {quote(self.lease[0])} || exit 1; "
        script = (
            f"{_ALIVE}mkdir -p {wd}; cd {wd} || exit 1; {renew}"
            f"if [ -f {pidf} ] && alive \"$(cat {pidf})\"; then echo '{name} is already running' >&2; exit 3; fi; "
            f"rm -f {watchdog_pidf}; setsid nohup {inner} > {log} 2>&1 < /dev/null & pid=$!; echo $pid > {pidf}; echo $pid"
        )
        return int(self.run(script, timeout_s=30).stdout.strip())

    def is_running(self, name: str, workdir: str) -> bool:
        """Whether the process started as `name` (a live member of its group, its lease watchdog left out) runs."""
        _, _, pidf, watchdog_pidf = _paths(name, workdir)
        script = f"{_ALIVE}[ -f {pidf} ] || {{ echo no; exit 0; }}; {_READ_PID.format(pidf=pidf)}" \
                 f"if alive $pid {watchdog_pidf}; then echo yes; else echo no; fi"
        return self.run(script, timeout_s=30, idempotent=True).stdout.strip() == "yes"

    def stop_detached(self, name: str, workdir: str, grace_s: float = 5) -> str:
        """TERM the process group, KILL it after `grace_s`; return 'absent' (never started, or stopped already),
        'ended' (it had ended on its own: what was left of its group, its watchdog, is stopped), 'terminated'
        or 'killed'."""
        _, _, pidf, watchdog_pidf = _paths(name, workdir)
        ticks = max(1, int(grace_s * 10))
        script = (
            f"{_ALIVE}[ -f {pidf} ] || {{ echo absent; exit 0; }}; {_READ_PID.format(pidf=pidf)}"
            f"ended=; alive $pid {watchdog_pidf} || ended=yes; what=terminated; "
            "if alive $pid; then kill -TERM -$pid 2>/dev/null; i=0; "
            f"while alive $pid && [ $i -lt {ticks} ]; do sleep 0.1; i=$((i+1)); done; "
            "if alive $pid; then kill -KILL -$pid 2>/dev/null; i=0; "
            "while alive $pid && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; what=killed; fi; fi; "
            "alive $pid && { echo \"group $pid survived KILL\" >&2; exit 4; }; "
            f"rm -f {pidf} {watchdog_pidf}; if [ -n \"$ended\" ]; then echo ended; else echo $what; fi"
        )
        return self.run(script, timeout_s=grace_s + 15, idempotent=True).stdout.strip()
