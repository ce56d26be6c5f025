"""File copies: a 20 MB round trip with the same sha256, and a get that resumes a partial file."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tasks.stage.transport import Transport

SIZE = 20 * 1024 * 1024


def sha256(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_put_then_get_20mb_round_trip(transport: Transport, tmp_path: Path):
    source = tmp_path / "source.bin"
    source.write_bytes(os.urandom(SIZE))
    remote = str(tmp_path / "remote" / "deeper" / "copy.bin")
    transport.put(source, remote)
    assert sha256(remote) == sha256(source)
    assert transport.exists(remote) and not transport.exists(remote + ".part")
    assert not transport.exists(str(tmp_path / "absent"))
    back = tmp_path / "back" / "copy.bin"
    assert transport.get(remote, back) == SIZE
    assert sha256(back) == sha256(source)
    assert not back.with_name("copy.bin.part").exists()


def test_get_resumes_a_partial_file_by_size(transport: Transport, tmp_path: Path):
    data = os.urandom(SIZE)
    remote = tmp_path / "remote.bin"
    remote.write_bytes(data)
    local = tmp_path / "local.bin"
    local.with_name("local.bin.part").write_bytes(data[: 7 * 1024 * 1024])
    assert transport.get(str(remote), local) == SIZE - 7 * 1024 * 1024
    assert sha256(local) == hashlib.sha256(data).hexdigest()
    local.with_name("local.bin.part").write_bytes(b"x" * (SIZE + 1))  # larger than the source: start over
    assert transport.get(str(remote), local) == SIZE
    assert sha256(local) == hashlib.sha256(data).hexdigest()
