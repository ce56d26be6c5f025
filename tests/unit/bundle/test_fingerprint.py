"""The fingerprint pass (tasks/bundle/files.py): one read per file gives its sha256, its text's size and lines
(a gzip file unpacked and checked on the way) and the lines holding a reader's marker, whatever the chunking."""

from __future__ import annotations

import gzip
import hashlib

import pytest

from tasks.bundle import files
from tasks.bundle.files import CompressedFileError, fingerprint

TEXT = b"".join(
    (b'{"type":"Metric","data":{},"metric":"m%d"}\n' % n if n % 7 == 0 else b'{"type":"Point","n":%d}\n' % n)
    for n in range(500)
) + b"last line without newline"


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_sha_size_lines_and_marked_lines_across_chunk_borders(tmp_path, monkeypatch, packed):
    monkeypatch.setattr(files, "PASS_CHUNK", 37)  # every marked line crosses a chunk border somewhere
    monkeypatch.setattr(files, "GZIP_READ", 11)
    raw = gzip.compress(TEXT) if packed else TEXT
    (tmp_path / "f").write_bytes(raw)
    got = fingerprint(tmp_path / "f", marker=b'"Metric"')
    assert got.sha256 == hashlib.sha256(raw).hexdigest()
    assert (got.size, got.lines) == (len(TEXT), TEXT.count(b"\n") + 1)
    assert got.marked == tuple(line for line in TEXT.split(b"\n") if b'"Metric"' in line)


@pytest.mark.parametrize("marker", [b'"Metric"', b"Metric", b'"type":"M', b"metric"])
def test_a_marker_is_found_by_its_anchor_byte_whatever_else_holds_that_byte(tmp_path, monkeypatch, marker):
    monkeypatch.setattr(files, "PASS_CHUNK", 29)
    text = b"".join(
        b'{"type":"Metric","M":%d}\n' % n if n % 5 == 0 else b'{"M":"MMetri","Metri":"Mx","metri":%d}\n' % n
        for n in range(300)
    ) + b'M"Metric"M'  # the last line, without newline, holds it too
    (tmp_path / "f").write_bytes(text)
    assert fingerprint(tmp_path / "f", marker=marker).marked == tuple(line for line in text.split(b"\n")
                                                                       if marker in line)


@pytest.mark.parametrize("misses", [1, 3, files.ANCHOR_MISSES])
def test_past_its_anchor_misses_the_search_finds_the_same_lines(tmp_path, monkeypatch, misses):
    """A file full of the anchor byte: the search gives way to a whole-marker find after ANCHOR_MISSES (what that
    saves, 3.7 s against 0.08 s on 16 MB, is measured in docs/performance.md, not timed here), and it finds what
    the anchor's search finds, across chunk borders."""
    monkeypatch.setattr(files, "ANCHOR_MISSES", misses)
    monkeypatch.setattr(files, "PASS_CHUNK", 4096)
    text = b"M" * 50 + b'"Metric"M\n' + (b"M" * 1000 + b"\n") * 200 + b'MM"Metric"\n' + b'M"Metri"MM"Metric"\n'
    (tmp_path / "f").write_bytes(text)
    assert fingerprint(tmp_path / "f", marker=b'"Metric"').marked == tuple(
        line for line in text.split(b"\n") if b'"Metric"' in line)


def test_too_many_marked_lines_are_unknown(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MARKED_LINES", 10)
    (tmp_path / "f").write_bytes(TEXT)
    assert fingerprint(tmp_path / "f", marker=b'"Metric"').marked is None


def test_a_truncated_gzip_is_named_and_stops_the_reader(tmp_path):
    packed = gzip.compress(TEXT * 50)
    (tmp_path / "f.gz").write_bytes(packed[: len(packed) // 2])
    stopped = []
    with pytest.raises(CompressedFileError, match="truncated gzip file"):
        fingerprint(tmp_path / "f.gz", on_refused=lambda: stopped.append(True))
    assert stopped == [True]


@pytest.mark.parametrize(("unpacked", "read"), [(1, 1), (7, 5), (4096, 3), (1 << 20, 1 << 20)])
def test_gzip_members_and_padding_unpack_as_gzip_reads_them(tmp_path, monkeypatch, unpacked, read):
    """The pass unpacks by zlib in large pieces (few GIL hand-overs); whatever the pieces, it reads what Python's
    gzip module reads: several members, zero padding after them, CRC and size checked."""
    monkeypatch.setattr(files, "PASS_CHUNK", unpacked)
    monkeypatch.setattr(files, "GZIP_READ", read)
    parts = [TEXT[:900], b"", TEXT[900:] * 3]
    raw = gzip.compress(parts[0], 9) + b"\0\0" + gzip.compress(parts[1], 0) + gzip.compress(parts[2], 1) + b"\0"
    (tmp_path / "f.gz").write_bytes(raw)
    got = fingerprint(tmp_path / "f.gz")
    assert (got.size, got.lines) == (len(gzip.decompress(raw)), b"".join(parts).count(b"\n") + 1)
    assert b"".join(files._gzip_chunks(tmp_path / "f.gz")) == b"".join(parts)


@pytest.mark.parametrize(("damage", "message"), [
    (lambda raw: raw + b"junk after", "what follows the end of its stream is no gzip member"),
    (lambda raw: raw[:-4] + bytes([raw[-4] ^ 1]) + raw[-3:], "incorrect length check"),  # the size in the trailer
    (lambda raw: raw[:-8] + bytes([raw[-8] ^ 1]) + raw[-7:], "incorrect data check"),  # the CRC in the trailer
    (lambda raw: raw[:1000], "truncated gzip file"),
])
def test_damaged_gzip_is_named(tmp_path, monkeypatch, damage, message):
    monkeypatch.setattr(files, "PASS_CHUNK", 64)
    (tmp_path / "f.gz").write_bytes(damage(gzip.compress(TEXT * 5)))
    with pytest.raises(CompressedFileError, match=message):
        fingerprint(tmp_path / "f.gz")
