"""Reading the files of a bundle: gzip or not by their bytes (whatever the name says), and their fingerprints."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its name says)."""
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def open_text(path: Path):
    """Open a raw file as text, gunzipping transparently; undecodable bytes are replaced, not fatal."""
    if is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()

