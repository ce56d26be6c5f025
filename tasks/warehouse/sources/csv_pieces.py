"""Delimited files read by DuckDB's CSV reader, with nothing lost to a line cut inside quotes.

The reader lets a quoted field run across lines (JMeter writes multi-line messages that way), so a line cut
short inside quotes (a writer killed mid-line; JMeter appending a new run to the same file) opens a field
that swallows the lines after it into one rejected record: 1000 good samples became one reject. When a
rejected record spans lines, the file is read again in pieces: the lines before that record, its first
line alone (rejected, with its number), and every line after it as a new file, checked the same way.
Rejected lines keep the file's own physical line numbers throughout.

Which rejected records are cut lines: in files whose records never span lines (access logs, k6 CSV),
every rejected record that ran past its line or whose quote never closed. In files whose records may
span lines (JTL messages), only those whose next line is a whole record by itself (`starts_record`: as
many delimiters as a record has); otherwise it is a broken multi-line record, one reject, as DuckDB read it.

Finding the cut lines one at a time with DuckDB costs a read of the rest of the file per cut (805 cut lines
in 7 MB took 77 s). So the file is first scanned once for lines that end inside quotes (`cut_line_numbers`,
the same rule on the bytes: quotes counted, escaped ones left out) and split at all of them in one pass;
DuckDB then checks each piece, and only a piece in which it still finds a cut line (a case the scan does
not model) is split the slow way. A file in an encoding that is not ASCII-compatible (UTF-16) goes the
slow way as a whole.

A reader hands over two functions: `read(path)`, the raw relation of one file with its CSV options, and
`load(relation)`, which stages it and appends its rows to request_facts.
"""

from __future__ import annotations

import gzip
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import duckdb

from tasks.bundle.files import is_gzip
from tasks.warehouse.sources.base import (
    SourceContext,
    loaded_rows,
    reject,
)
from tasks.warehouse.sources.csv_reject_table import (
    COPY_CHUNK,
    Piece,
    drop_rejects,
    has_rejects,
    keep_rejects,
)

CUT_REASON = "UNTERMINATED QUOTE: the line ends inside a quoted field (cut short?); the lines after it are read on"
# Refused lines read with their reasons, at most: DuckDB holds 2-5 KB per refused line plus ~18 times its text
# (50,000 junk lines of 1.9 KB: 1.76 GB), so the reject read is bounded in lines and in bytes.
REJECT_SCAN_LINES = 20_000
REJECT_SCAN_BYTES = 8 << 20


def error_options(store: bool) -> dict:
    """read_csv options for a reader's relation: records refused are stored (`reject_errors`) or skipped.

    Storing costs DuckDB about 2-5 KB per refused line whatever `rejects_limit` says (a typed read of 2 M junk
    lines: 11.6 GB), so the load skips them and `load_csv` asks for them in a read of its own, bounded in
    lines and bytes (REJECT_SCAN_LINES, REJECT_SCAN_BYTES), which keeps the first REJECTS_KEPT (`keep_rejects`).
    """
    return {"store_rejects": True} if store else {"ignore_errors": True}


def load_csv(
    ctx: SourceContext,
    read: Callable[[Path, bool], duckdb.DuckDBPyRelation],
    load: Callable[[duckdb.DuckDBPyRelation], None],
    has_header: bool,
    starts_record: Callable[[bytes], bool] | None = None,
    quoting: tuple[bytes, bytes] | None = (b'"', b'"'),
    accepted: Callable[[], int] | None = None,
) -> int:
    """Load ctx.file through `read` and `load`; returns the number of rejected lines.

    `read(path, store)` is the raw relation, storing refused records or not (`error_options`).
    `starts_record` is for files whose records may span lines: does this line hold a whole record?
    `quoting` is the reader's (quote, escape) as bytes, None where the bytes cannot be scanned (UTF-16).
    `accepted` counts the records the reader took when `load` keeps fewer rows than that (k6 CSV).

    One read loads the rows; a file whose lines all became rows is done. Otherwise the refused lines
    are looked for: with few suspects (within REJECT_SCAN_LINES and, at the file's mean line length,
    REJECT_SCAN_BYTES), in a read of the whole file that stores them (and the cut-line repair below); with
    more, every line not loaded is counted and the file's first lines (as many) are read again to keep the
    first rejects with their reasons.
    """
    drop_rejects(ctx)
    load(read(ctx.file, False))
    count = accepted or (lambda: loaded_rows(ctx))
    suspects = ctx.fingerprint().lines - int(has_header) - count()
    if suspects <= 0:
        return 0
    if suspects > REJECT_SCAN_LINES or suspects * _mean_line_bytes(ctx) > REJECT_SCAN_BYTES:
        return _count_and_keep_first(ctx, read, load, has_header, quoting, starts_record, count)
    if _dry_read(read(ctx.file, True)) != count():  # DuckDB resumes after a broken multi-line record
        ctx.con.execute("delete from request_facts where source_key = $key", {"key": ctx.source_key})
        drop_rejects(ctx)  # otherwise when it skips errors than when it stores them: load as it stores
        load(read(ctx.file, True))
    if _first_cut(ctx, ctx.file, starts_record) is None:
        return keep_rejects(ctx, Piece(ctx.file))
    # Slow path, only for a file with a cut line: forget this read and read the file in pieces.
    drop_rejects(ctx)
    ctx.con.execute("delete from request_facts where source_key = $key", {"key": ctx.source_key})
    with tempfile.TemporaryDirectory(prefix="perfcampaign-pieces-") as folder:
        whole, cut_lines = Piece(ctx.file), []
        if quoting is not None:
            found = cut_line_numbers(ctx.file, *quoting, starts_record, has_header)
            whole, cut_lines = _without_lines(ctx.file, found, Path(folder) / "without-cut-lines.csv")
        pieces, more_cuts = _split_at_cut_lines(ctx, read, has_header, starts_record, whole, Path(folder))
        cut_lines = sorted(cut_lines + more_cuts)
        rejected = 0
        for piece in pieces:
            load(read(piece.path, True))
            rejected += keep_rejects(ctx, piece)
    reject(ctx, [(line_no, CUT_REASON, text) for line_no, text in cut_lines])
    return rejected + len(cut_lines)


def _count_and_keep_first(ctx, read, load, has_header, quoting, starts_record, count) -> int:
    """A file with more suspect lines than the bounds (junk): each line not loaded is counted, and the rejects
    among its first REJECT_SCAN_LINES lines / REJECT_SCAN_BYTES are kept with their reasons; memory stays bounded.

    Cut lines (found by the byte scan) are taken out first and the rest loaded again, so a quote left open
    cannot make good lines count as junk.
    """
    cut_lines: list[tuple[int, str]] = []
    with tempfile.TemporaryDirectory(prefix="perfcampaign-rejects-") as folder:
        whole = Piece(ctx.file)
        found = cut_line_numbers(ctx.file, *quoting, starts_record, has_header) if quoting is not None else []
        if found:
            whole, cut_lines = _without_lines(ctx.file, found, Path(folder) / "without-cut-lines.csv")
            ctx.con.execute("delete from request_facts where source_key = $key", {"key": ctx.source_key})
            load(read(whole.path, False))
        head = Path(folder) / "head.csv"
        _head(whole.path, head)
        _dry_read(read(head, True))
        keep_rejects(ctx, Piece(head, whole.line_offset, whole.skipped))
    reject(ctx, [(line_no, CUT_REASON, text) for line_no, text in cut_lines])
    return ctx.fingerprint().lines - int(has_header) - count()


def _mean_line_bytes(ctx: SourceContext) -> float:
    return ctx.fingerprint().size / max(ctx.fingerprint().lines, 1)


def _dry_read(raw: duckdb.DuckDBPyRelation) -> int:
    """Read every column of `raw` (each converted, so each refused record is stored); the records taken."""
    counts = ", ".join(f'count("{name}")' for name in raw.columns)
    return raw.aggregate(f"count(*), {counts}").fetchone()[0]


def _head(path: Path, out_path: Path) -> None:
    """The file's first lines (unpacked), at most REJECT_SCAN_LINES and REJECT_SCAN_BYTES (whole lines)."""
    opener = gzip.open if is_gzip(path) else open
    with opener(path, "rb") as source:
        head = source.read(REJECT_SCAN_BYTES)
    end = -1
    for _ in range(min(REJECT_SCAN_LINES, head.count(b"\n"))):
        end = head.index(b"\n", end + 1)
    out_path.write_bytes(head[: end + 1] if end >= 0 else head)


def cut_line_numbers(path: Path, quote: bytes, escape: bytes, starts_record: Callable[[bytes], bool] | None,
                     has_header: bool) -> list[int]:
    """1-based numbers of the lines that start a record and end inside quotes (see the module's docstring).

    One pass over the bytes. A record that may span lines (`starts_record` given) is a cut line only when the
    line after its first one is a whole record; otherwise its quote stays open over the lines that follow.
    """
    escaped = re.compile(re.escape(escape) + b".") if escape and escape != quote else None
    opener = gzip.open if is_gzip(path) else open
    cuts: list[int] = []
    open_record, pending = False, 0  # pending: a record's first line ended inside quotes, judged by the next
    with opener(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if pending:
                if starts_record(line):
                    cuts.append(pending)
                    open_record = False
                pending = 0
            if number == 1 and has_header:
                continue
            if escaped is not None and escape in line:
                line = escaped.sub(b"", line)
            odd = line.count(quote) % 2 == 1
            if open_record:
                open_record = not odd
            elif odd:
                if starts_record is None:
                    cuts.append(number)
                else:
                    open_record, pending = True, number
    return cuts


def _without_lines(path: Path, cuts: list[int], out_path: Path) -> tuple[Piece, list[tuple[int, str]]]:
    """The file without the lines numbered in `cuts`, written in one pass; (that file, the lines left out)."""
    opener = gzip.open if is_gzip(path) else open
    left_out: list[tuple[int, str]] = []
    wanted = set(cuts)
    with opener(path, "rb") as source, open(out_path, "wb") as out:
        for number, line in enumerate(source, start=1):
            if number in wanted:
                left_out.append((number, line.decode("utf-8", errors="replace").rstrip("\r\n")))
            else:
                out.write(line)
    return Piece(out_path, 0, tuple(cuts)), left_out


def _split_at_cut_lines(
    ctx: SourceContext,
    read: Callable[[Path], duckdb.DuckDBPyRelation],
    has_header: bool,
    starts_record: Callable[[bytes], bool] | None,
    current: Piece,
    folder: Path,
) -> tuple[list[Piece], list[tuple[int, str]]]:
    """Pieces without cut lines, and the cut lines themselves as (line number, text), one DuckDB read per cut."""
    header = _first_line(current.path) if has_header else b""
    pieces: list[Piece] = []
    cut_lines: list[tuple[int, str]] = []
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        drop_rejects(ctx)
        read(current.path, True).aggregate("count(*)").fetchall()  # a dry read: only its rejects count
        position = _first_cut(ctx, current.path, starts_record)
        drop_rejects(ctx)
        if position is None:
            pieces.append(current)
            return pieces, cut_lines
        number = len(pieces)
        before, after = folder / f"piece-{number}-before.csv", folder / f"piece-{number}-after.csv"
        cut_text, lines_before = _cut(current.path, position, header, before, after)
        if lines_before > 0:  # else the cut line is the piece's first: nothing before it to read
            pieces.append(Piece(before, current.line_offset, current.skipped))
        cut_lines.append((current.source_line(lines_before + 1), cut_text))
        # the piece after: its header line (if any) is not a line of the source
        current = Piece(after, current.line_offset + lines_before + 1 - (1 if has_header else 0), current.skipped)


def _cut(path: Path, position: int, header: bytes, before: Path, after: Path) -> tuple[str, int]:
    """Write the bytes before the line at `position` and those after it; (that line, lines before it)."""
    opener = gzip.open if is_gzip(path) else open
    lines_before = 0
    with opener(path, "rb") as source, open(before, "wb") as first:
        remaining = position - 1  # DuckDB's byte positions count from 1
        while remaining > 0:
            chunk = source.read(min(COPY_CHUNK, remaining))
            if not chunk:
                break
            lines_before += chunk.count(b"\n")
            first.write(chunk)
            remaining -= len(chunk)
        cut_line = source.readline()
        with open(after, "wb") as second:
            second.write(header)
            shutil.copyfileobj(source, second, COPY_CHUNK)
    return cut_line.decode("utf-8", errors="replace").rstrip("\r\n"), lines_before


def _first_line(path: Path) -> bytes:
    opener = gzip.open if is_gzip(path) else open
    with opener(path, "rb") as handle:
        return handle.readline()


def _first_cut(ctx: SourceContext, path: Path, starts_record: Callable[[bytes], bool] | None) -> int | None:
    """Byte position of the first rejected record that is a cut line (see the module's docstring)."""
    if not has_rejects(ctx):
        return None
    found = ctx.con.execute(
        "select distinct line_byte_position from reject_errors "
        "where error_type = 'UNQUOTED VALUE' or contains(csv_line, chr(10)) order by 1"
    ).fetchall()
    for (position,) in found:
        if starts_record is None or starts_record(_line_after(path, position)):
            return position
    return None


def _line_after(path: Path, position: int) -> bytes:
    """The physical line after the one that starts at DuckDB's byte `position` (counted from 1)."""
    opener = gzip.open if is_gzip(path) else open
    with opener(path, "rb") as handle:
        handle.seek(position - 1)
        handle.readline()
        return handle.readline()
