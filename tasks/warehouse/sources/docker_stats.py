"""Reader for `docker stats` output (`kind: docker_stats`): the streaming table and `--format json` lines.

The stream redraws a frame every 0.5 s with screen-control codes: `ESC[2J ESC[H` before the frame before
docker v28; `ESC[H` first and `ESC[K` after every line (then `ESC[J`) since. The v28 client writes each frame
twice, once plain and once with `ESC[K` (it re-reads its own buffer; fixed in docker/cli#6876): when a file
has `ESC[K` at all, only lines that end with it are read. The table header comes once per frame; cells are
separated by at least three spaces (docker's tabwriter padding), so a cell's own single spaces stay.
Memory is in binary units (`MiB`, go-units BytesSize), network and block I/O in decimal units (`kB`,
HumanSizeWithPrecision); `--` is a stopped or unreadable container. Docker writes no times: a line that is
only an ISO-8601 time (as our monitors write one before each frame or batch of JSON lines) dates the samples
after it; samples with no such line before them count for the whole run only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from tasks.bundle.files import open_text
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources.base import Rejects, SourceContext, SourceResult, reject
from tasks.warehouse.sources.host_metrics import (
    load_samples,
    manifest_zone,
    parse_iso,
    raw_relation,
)

CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ERASE_LINE = "\x1b[K"
CELL_GAP = re.compile(r"\s{2,}")
# Table headers (docker/cli formatter_stats.go) and the JSON key each one shows.
HEADERS = {
    "CONTAINER ID": "ID", "CONTAINER": "Container", "NAME": "Name", "CPU %": "CPUPerc",
    "MEM USAGE / LIMIT": "MemUsage", "PRIV WORKING SET": "MemUsage", "MEM %": "MemPerc",
    "NET I/O": "NetIO", "BLOCK I/O": "BlockIO", "PIDS": "PIDs",
}
UNITS = {
    "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "PiB": 1024**5,
    "kB": 1000, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4, "PB": 1000**5,
}
SIZE = re.compile(r"^(\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s?([A-Za-z]+)$")
NUMERIC = ("cpu_pct", "mem_used_bytes", "mem_limit_bytes", "mem_pct", "net_in_bytes", "net_out_bytes",
           "block_in_bytes", "block_out_bytes", "pids")


@dataclass
class DockerLines:
    """The samples of one docker stats file, as columns, plus the lines that could not be read."""

    columns: dict[str, list[Any]] = field(
        default_factory=lambda: {name: [] for name in ("line_no", "written_at", "container", *NUMERIC)})
    rejects: Rejects = field(default_factory=Rejects)  # counted; the first REJECTS_KEPT kept
    drafts: int = 0

    @property
    def rows(self) -> int:
        return len(self.columns["line_no"])


def size_bytes(text: str) -> float | None:
    """`1.5MiB`, `648B`, `1e+03kB` as bytes; `--` is None."""
    text = text.strip()
    if text == "--":
        return None
    match = SIZE.match(text)
    if not match or match[2] not in UNITS:
        raise ValueError(f"not a size: {text!r}")
    return float(match[1]) * UNITS[match[2]]


def _pair(text: str) -> tuple[float | None, float | None]:
    """`used / limit`, `in / out`: two sizes; `--` (or `-- / --`) is missing."""
    if text.strip() == "--":
        return None, None
    parts = text.split(" / ")
    if len(parts) == 1:  # Windows: the private working set alone
        return size_bytes(parts[0]), None
    if len(parts) != 2:
        raise ValueError(f"not `a / b`: {text!r}")
    return size_bytes(parts[0]), size_bytes(parts[1])


def _percent(text: str) -> float | None:
    text = text.strip()
    if text == "--":
        return None
    if not text.endswith("%"):
        raise ValueError(f"not a percentage: {text!r}")
    return float(text[:-1])


def sample_values(fields: dict[str, str]) -> dict[str, Any]:
    """One container's values from docker's fields (JSON keys); raises ValueError on a malformed one."""
    name = fields.get("Name")
    container = name if name and name != "--" else fields.get("Container") or fields.get("ID")
    if not container:
        raise ValueError("no container name or ID")
    used, limit = _pair(fields.get("MemUsage", "--"))
    net_in, net_out = _pair(fields.get("NetIO", "--"))
    block_in, block_out = _pair(fields.get("BlockIO", "--"))
    pids = fields.get("PIDs", "--").strip()
    return {
        "container": container, "cpu_pct": _percent(fields.get("CPUPerc", "--")), "mem_used_bytes": used,
        "mem_limit_bytes": limit, "mem_pct": _percent(fields.get("MemPerc", "--")), "net_in_bytes": net_in,
        "net_out_bytes": net_out, "block_in_bytes": block_in, "block_out_bytes": block_out,
        "pids": None if pids == "--" else int(pids),
    }


def parse_docker_stats(text: str, default_zone: tzinfo) -> DockerLines:
    """Read table frames and JSON lines; `default_zone` reads timestamp lines written without a zone."""
    out = DockerLines()
    raw_lines = text.split("\n")
    erased = ERASE_LINE in text
    header: list[str] | None = None
    written_at = None
    for line_no, raw in enumerate(raw_lines, start=1):
        clean = CONTROL.sub("", raw).strip()
        if not clean:
            continue
        stamped = parse_iso(clean, default_zone)
        if stamped is not None:
            written_at = stamped
            continue
        if erased and ERASE_LINE not in raw:
            out.drafts += 1  # docker v28's first, plain copy of a frame
            continue
        cells = CELL_GAP.split(clean)
        if all(cell in HEADERS for cell in cells):
            header = [HEADERS[cell] for cell in cells]
            continue
        try:
            if clean.startswith("{"):
                fields = json.loads(clean)
                if not isinstance(fields, dict):
                    raise ValueError("not a JSON object")
            elif header is None:
                raise ValueError("a table row before any header (CONTAINER ID  NAME  CPU % ...)")
            elif len(cells) != len(header):
                raise ValueError(f"expected {len(header)} cells separated by 2+ spaces, found {len(cells)}")
            else:
                fields = dict(zip(header, cells))
            values = sample_values({key: str(value) for key, value in fields.items()})
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            out.rejects.append((line_no, str(exc), clean))
            continue
        out.columns["line_no"].append(line_no)
        out.columns["written_at"].append(written_at)
        for name, value in values.items():
            out.columns[name].append(value)
    return out


def read(ctx: SourceContext) -> SourceResult:
    """Load one docker stats file into host_sample_facts; unreadable lines go to rejected_lines."""
    with open_text(ctx.file) as handle:
        parsed = parse_docker_stats(handle.read(), manifest_zone(ctx))
    timed = sum(1 for value in parsed.columns["written_at"] if value is not None)
    basis = ("own timestamps" if timed == parsed.rows and parsed.rows else
             "none (whole run only)" if timed == 0 else "own timestamps / none (whole run only)")
    types = {"line_no": "BIGINT", "written_at": "TIMESTAMPTZ", "container": "VARCHAR", "pids": "BIGINT"}
    raw = raw_relation(ctx.con, {name: (types.get(name, "DOUBLE"), values) for name, values in parsed.columns.items()})
    raw.create_view("raw_docker_stats", replace=True)
    build_model(ctx.con, "stg_docker_stats__samples")
    rows, notes = load_samples(ctx, ctx.con.view("stg_docker_stats__samples"), basis)
    drop_model(ctx.con, "stg_docker_stats__samples")
    ctx.con.execute("drop view raw_docker_stats")
    reject(ctx, parsed.rejects)
    if parsed.drafts:
        notes.insert(0, f"{parsed.drafts} lines skipped: docker v28 writes every frame twice, once without ESC[K")
    return SourceResult(rows=rows, rejected=len(parsed.rejects), notes=tuple(notes))
