"""DuckDB's table of refused CSV records (`reject_errors`, made by `store_rejects`) turned into rejected_lines:
one row per physical line of the source, at most REJECTS_KEPT per source (csv_pieces reads the file)."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from tasks.bundle.files import is_gzip
from tasks.warehouse.models import build_model
from tasks.warehouse.sources.base import REJECTS_KEPT, SourceContext

COPY_CHUNK = 1 << 22


@dataclass
class Piece:
    """A file to read, and how its physical lines map to the source's: line + line_offset, then the source's
    `skipped` lines (cut lines left out of the file, sorted) put back in."""

    path: Path
    line_offset: int = 0
    skipped: tuple[int, ...] = ()

    def source_line(self, line: int) -> int:
        number = line + self.line_offset
        for skipped in self.skipped:
            if skipped > number:
                break
            number += 1
        return number


def has_rejects(ctx: SourceContext) -> bool:
    return ctx.con.execute(
        "select count(*) from duckdb_tables() where table_name = 'reject_errors' and temporary"
    ).fetchone()[0] > 0


def drop_rejects(ctx: SourceContext) -> None:
    ctx.con.execute("drop table if exists reject_errors")
    ctx.con.execute("drop table if exists reject_scans")


def keep_rejects(ctx: SourceContext, piece: Piece) -> int:
    """Move the records DuckDB refused (`store_rejects`) into rejected_lines, one per physical line."""
    if not has_rejects(ctx):
        return 0
    _number_by_physical_line(ctx, piece)
    params = {"run_id": ctx.manifest.run_id, "host": ctx.source.host, "path": ctx.source.path}
    count = ctx.con.execute("select count(distinct line) from reject_errors").fetchone()[0]
    kept = ctx.con.execute("select count(*) from rejected_lines where run_id = $run_id and path = $path",
                           {"run_id": params["run_id"], "path": params["path"]}).fetchone()[0]
    ctx.con.execute(  # the first lines up to REJECTS_KEPT for the source; the rest are counted
        "delete from reject_errors where line not in "
        "(select distinct line from reject_errors order by line limit $room)", {"room": max(REJECTS_KEPT - kept, 0)})
    build_model(ctx.con, "rejected_lines", params)
    drop_rejects(ctx)
    return count


def _number_by_physical_line(ctx: SourceContext, piece: Piece) -> None:
    """Give rejected records the source's physical line number instead of DuckDB's record number.

    DuckDB's `reject_errors.line` counts records, so every quoted multi-line field before a bad record
    shifts it; `line_byte_position` is exact, and one pass counting newlines turns it into a line number.
    """
    found = ctx.con.execute("select distinct line_byte_position from reject_errors").fetchall()
    positions = sorted(position for (position,) in found)
    if not positions:
        return
    lines = [piece.source_line(line) for line in _line_numbers_at(piece.path, positions)]
    ctx.con.from_df(pd.DataFrame({"position": positions, "line_no": lines})).create_view(
        "reject_physical_lines", replace=True
    )
    ctx.con.execute(
        "update reject_errors set line = m.line_no from reject_physical_lines as m "
        "where reject_errors.line_byte_position = m.position"
    )
    ctx.con.execute("drop view reject_physical_lines")


def _line_numbers_at(path: Path, positions: list[int]) -> list[int]:
    """1-based line numbers of sorted byte offsets (of the decompressed text for a gzip file)."""
    opener = gzip.open if is_gzip(path) else open
    result: list[int] = []
    line, base, index = 1, 0, 0
    with opener(path, "rb") as handle:
        while index < len(positions):
            chunk = handle.read(COPY_CHUNK)
            if not chunk:
                break
            end, offset = base + len(chunk), 0
            while index < len(positions) and positions[index] < end:
                target = positions[index] - base
                line += chunk.count(b"\n", offset, target)
                offset = target
                result.append(line)
                index += 1
            line += chunk.count(b"\n", offset)
            base = end
    return result + [line] * (len(positions) - len(result))
