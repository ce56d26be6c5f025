"""Reading the files of a bundle: gzip or not by their bytes (whatever the name says), and their fingerprints."""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from pathlib import Path

# A gzip file may not unpack past either limit (a 1 MB bomb made 2.2 GB of RSS); settable, docs/security.md.
MAX_DECOMPRESSED_BYTES = int(os.environ.get("PERFCAMPAIGN_MAX_DECOMPRESSED_BYTES", 32 << 30))
MAX_GZIP_RATIO = float(os.environ.get("PERFCAMPAIGN_MAX_GZIP_RATIO", 200))
HEADER_CHARS = 1 << 20  # a header line read in Python (k6 CSV, JTL) longer than this is no header


class CompressedFileError(ValueError):
    """A gzip file that is truncated, corrupt, or unpacks past the limits."""


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



def check_gzip(path: Path, max_bytes: int = MAX_DECOMPRESSED_BYTES, max_ratio: float = MAX_GZIP_RATIO) -> int:
    """Stream-decompress a gzip file once, counting: its size unpacked, or CompressedFileError.

    Run before any reader (DuckDB's or ours) opens it, so a bomb is refused after reading at most the
    limit, and a truncated file is named as such instead of failing deep inside a reader.
    """
    limit = min(max_bytes, max(1 << 20, int(path.stat().st_size * max_ratio)))
    total = 0
    try:
        with gzip.open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                total += len(chunk)
                if total > limit:
                    raise CompressedFileError(
                        f"unpacks to more than {limit:,} bytes ({path.stat().st_size:,} compressed; limits: "
                        f"{max_bytes:,} bytes, ratio {max_ratio:g}): refused as a possible gzip bomb")
    except EOFError:
        raise CompressedFileError(f"truncated gzip file: it ends after {total:,} unpacked bytes, before the end of "
                                  "its stream (copied while still being written, or cut short)") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise CompressedFileError(f"corrupt gzip file after {total:,} unpacked bytes: {exc}") from None
    return total
