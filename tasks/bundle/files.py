"""Reading the files of a bundle: gzip or not by their bytes (whatever the name says), and their fingerprints."""

from __future__ import annotations

import hashlib
import io
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

# A gzip file may not unpack past either limit (a 1 MB bomb made 2.2 GB of RSS); settable, docs/security.md.
MAX_DECOMPRESSED_BYTES = int(os.environ.get("PERFCAMPAIGN_MAX_DECOMPRESSED_BYTES", 32 << 30))
MAX_GZIP_RATIO = float(os.environ.get("PERFCAMPAIGN_MAX_GZIP_RATIO", 200))
CHUNK = 1 << 20
# The fingerprint pass reads and unpacks in large pieces: each zlib, sha256 or numpy call releases the GIL, and a
# thread beside it (the demo's warm-up imports) keeps it up to the switch interval each time it is asked back.
# gzip.open's reader makes a call per 8 KB of packed bytes: 545 MB of k6 JSON took 4.7 s beside a busy thread
# (0.3 s alone); read 1 MB at a time and unpacked 8 MB at a time, 0.9 s (bench/gil_pass.py).
PASS_CHUNK = 8 << 20
GZIP_READ = 1 << 20
HEADER_CHARS = 1 << 20  # a header line read in Python (k6 CSV, JTL) longer than this is no header


class CompressedFileError(ValueError):
    """A gzip file that is truncated, corrupt, or unpacks past the limits."""


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its name says)."""
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def open_text(path: Path):
    """Open a raw file as text, gunzipping transparently; undecodable bytes are replaced, not fatal.

    A gzip file is read through `_Bounded`, so a Python reader stops at the gzip limits (a bomb of one
    600 MB line would otherwise be held whole) with CompressedFileError.
    """
    if is_gzip(path):
        return io.TextIOWrapper(io.BufferedReader(_Bounded(path), CHUNK), encoding="utf-8", errors="replace",
                                newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Fingerprint:
    """What one pass over a raw file learns: its sha256, its text's size and physical lines (unpacked), the
    lines holding a reader's `marker` (None when more than MARKED_LINES did: then they are not known), and
    whether its text ends inside a line (`cut`: no newline after the last, as a writer stopped mid-line leaves it)."""

    sha256: str
    size: int
    lines: int
    marked: tuple[bytes, ...] | None = ()
    cut: bool = False


MARKED_LINES = 10_000
ANCHOR_MISSES = 64  # anchor bytes not in a marker, after which one search costs no more than bytes.find


class _Text:
    """Counts the bytes and lines of a file's text, chunk by chunk, and keeps the lines holding `marker`.

    Speed: this runs beside DuckDB over every byte of every file, and on a busy 2-core machine its CPU adds to
    the ingest's wall time. `bytes.count(b"\\n")` goes at 1.8 GB/s, numpy's count at 7 GB/s; `bytes.find` of a
    one-byte needle is memchr (12 GB/s), of a longer one 1.6 GB/s: the marker is looked for by its anchor byte
    (see `_anchor`) and compared whole where that byte is (0.04 s instead of 0.3 s for k6's 500 MB of text).
    """

    def __init__(self, marker: bytes | None):
        self.marker, self.size, self.lines, self.last = marker, 0, 0, b"\n"
        self.partial, self.marked = b"", []
        self.anchor = _anchor(marker) if marker else 0

    def add(self, chunk: bytes) -> None:
        self.size, self.lines, self.last = self.size + len(chunk), self.lines + _newlines(chunk), chunk[-1:]
        if self.marker is None or self.marked is None:
            return
        first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
        if first < 0:  # no line ends here; a marked line is short, a longer partial one is no such line
            self.partial = (self.partial + chunk)[-HEADER_CHARS:]
            return
        self._mark(self.partial + chunk[: first + 1], 0, None)  # the line across the chunk border
        self._mark(chunk, first + 1, last + 1)  # searched in place: no copy of the chunk
        self.partial = chunk[last + 1:]

    def result(self, sha256: str) -> Fingerprint:
        if self.marker is not None and self.marked is not None:
            self._mark(self.partial, 0, None)
        marked = None if self.marked is None else tuple(self.marked)
        cut = self.size > 0 and self.last != b"\n"
        return Fingerprint(sha256, self.size, self.lines + cut, marked, cut)

    def _mark(self, text: bytes, start: int, stop: int | None) -> None:
        """Keep the lines of text[start:stop] (whole lines) that hold the marker."""
        stop = len(text) if stop is None else stop
        found = self._find(text, start, stop)
        while found >= 0 and self.marked is not None:
            begin, end = text.rfind(b"\n", start, found) + 1 or start, text.find(b"\n", found, stop)
            end = stop if end < 0 else end
            self.marked.append(text[max(begin, start):end].rstrip(b"\n"))
            if len(self.marked) > MARKED_LINES:
                self.marked = None
            found = self._find(text, end, stop)

    def _find(self, text: bytes, start: int, stop: int) -> int:
        """Where the marker starts in text[start:stop], -1 if nowhere: its anchor byte found, then the whole.
        Where that byte is common (a hostile file of it), the whole marker is looked for after ANCHOR_MISSES."""
        anchor, at = self.marker[self.anchor: self.anchor + 1], start + self.anchor
        for _ in range(ANCHOR_MISSES):
            if (at := text.find(anchor, at, stop)) < 0:
                return -1
            if text.startswith(self.marker, at - self.anchor, stop):
                return at - self.anchor
            at += 1
        return text.find(self.marker, at - self.anchor, stop)  # no marker starts before: its anchor was not there


def _anchor(marker: bytes) -> int:
    """Where in the marker is the byte to look for first: its first upper-case letter (rare in logs written by
    programs, outside names), else its first byte."""
    return next((i for i, byte in enumerate(marker) if 65 <= byte <= 90), 0)


def _newlines(chunk: bytes) -> int:
    import numpy  # heavy: imported by duckdb's client in an ingest anyway; not by the CLI's other commands

    return int(numpy.count_nonzero(numpy.frombuffer(chunk, numpy.uint8) == 10))


def fingerprint(path: Path, on_refused: Callable[[], None] | None = None, marker: bytes | None = None) -> Fingerprint:
    """sha256 of the file's bytes; size and lines of its text (a gzip file unpacked once, counting), and
    the lines holding `marker` (e.g. k6's `"Metric"` lines, so its reader knows which metrics the file has).

    Run in a thread while the reader parses the same file, so a gzip file is checked without a pass of
    its own: a bomb past the limits, a truncated or corrupt stream raise CompressedFileError (the ingest
    names the file), and `on_refused` is called first to stop a reader still busy with it.
    """
    digest, packed, text = hashlib.sha256(), is_gzip(path), _Text(marker)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(PASS_CHUNK), b""):
            digest.update(chunk)
            if not packed:
                text.add(chunk)
    if packed:
        try:
            for chunk in _gzip_chunks(path):
                text.add(chunk)
        except CompressedFileError:
            if on_refused is not None:
                on_refused()
            raise
    return text.result(digest.hexdigest())


def _gzip_chunks(path: Path):
    """The unpacked chunks (up to PASS_CHUNK bytes) of a gzip file of one or more members, refusing to unpack past
    the limits; a truncated or corrupt stream raises CompressedFileError. zlib checks each member's CRC and size."""
    packed, total = path.stat().st_size, 0
    limit = min(MAX_DECOMPRESSED_BYTES, max(1 << 20, int(packed * MAX_GZIP_RATIO)))
    unpack, data = zlib.decompressobj(31), b""

    def unpacked(work: Callable[[], bytes]) -> bytes:
        nonlocal total
        try:
            chunk = work()
        except zlib.error as exc:
            raise CompressedFileError(f"corrupt gzip file after {total:,} unpacked bytes: {exc}") from None
        total += len(chunk)
        if total > limit:
            raise CompressedFileError(
                f"unpacks to more than {limit:,} bytes ({packed:,} compressed; limits: "
                f"{MAX_DECOMPRESSED_BYTES:,} bytes, ratio {MAX_GZIP_RATIO:g}): refused as a possible gzip bomb")
        return chunk

    with open(path, "rb") as handle:
        while data or (data := handle.read(GZIP_READ)):
            if unpack.eof:  # what follows a member is another member, or zero padding as gzip.open allows
                if not (data := data.lstrip(b"\0")):
                    continue
                if not b"\x1f\x8b".startswith(data[:2]):
                    raise CompressedFileError(f"corrupt gzip file after {total:,} unpacked bytes: what follows the "
                                              f"end of its stream is no gzip member ({data[:8]!r})")
                unpack = zlib.decompressobj(31)
            if chunk := unpacked(partial(unpack.decompress, data, PASS_CHUNK)):
                yield chunk
            data = unpack.unused_data if unpack.eof else unpack.unconsumed_tail
    if not unpack.eof and (rest := unpacked(unpack.flush)):  # output zlib held back when the last chunk filled up
        yield rest
    if not unpack.eof:
        raise CompressedFileError(f"truncated gzip file: it ends after {total:,} unpacked bytes, before the end of "
                                  "its stream (copied while still being written, or cut short)")


class _Bounded(io.RawIOBase):
    """A gzip file's text as a raw stream for Python readers, within the limits of `_gzip_chunks`."""

    def __init__(self, path: Path):
        self.chunks, self.rest, self.at = _gzip_chunks(path), b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.at == len(self.rest):
            self.rest, self.at = next(self.chunks, b""), 0
        size = min(len(buffer), len(self.rest) - self.at)
        buffer[:size] = memoryview(self.rest)[self.at: self.at + size]  # one copy, of what is read
        self.at += size
        return size

    def close(self) -> None:
        self.chunks.close()
        super().close()
