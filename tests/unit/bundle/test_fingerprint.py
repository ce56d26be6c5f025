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
    monkeypatch.setattr(files, "CHUNK", 37)  # every marked line crosses a chunk border somewhere
    raw = gzip.compress(TEXT) if packed else TEXT
    (tmp_path / "f").write_bytes(raw)
    got = fingerprint(tmp_path / "f", marker=b'"Metric"')
    assert got.sha256 == hashlib.sha256(raw).hexdigest()
    assert (got.size, got.lines) == (len(TEXT), TEXT.count(b"\n") + 1)
    assert got.marked == tuple(line for line in TEXT.split(b"\n") if b'"Metric"' in line)


@pytest.mark.parametrize("marker", [b'"Metric"', b"Metric", b'"type":"M', b"metric"])
def test_a_marker_is_found_by_its_anchor_byte_whatever_else_holds_that_byte(tmp_path, monkeypatch, marker):
    monkeypatch.setattr(files, "CHUNK", 29)
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
    monkeypatch.setattr(files, "CHUNK", 4096)
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
