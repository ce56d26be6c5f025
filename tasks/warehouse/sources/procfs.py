"""Reader for the `procfs` monitor's file (`kind: procfs`, tasks/stage/procfs_sampler.py): /proc counters.

Each `## at <time>` block holds /proc/net/dev, /proc/diskstats and, per watched process, /proc/PID/stat and
status lines. This reader keeps the counters as they are, one row per interface, disk and process per
sample; the staging model turns them into the rates sar and pidstat print (per second between consecutive
samples), so the same marts read both. Disks whose counters are all 0 (never used: most loop and ram
devices) are left out and counted in a note. A line that cannot be read (cut short when the sampler was
stopped, garbage) goes to rejected_lines with its number and why.
"""

from __future__ import annotations

import re
from datetime import timezone

from tasks.bundle.files import open_text
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources.base import Rejects, SourceContext, SourceResult, reject
from tasks.warehouse.sources.host_metrics import load_samples, parse_iso, raw_relation

_HEADER = re.compile(r"^## procfs((?:\s+\w+=\d*)*)\s*$")
NET = ("rx_bytes", "rx_packets", "tx_bytes", "tx_packets")  # /proc/net/dev fields 1, 2, 9, 10
DISK = ("reads", "read_sectors", "read_ms", "writes", "write_sectors", "write_ms", "io_ms", "weighted_io_ms")
_DISK_FIELDS = (3, 5, 6, 7, 9, 10, 12, 13)  # of /proc/diskstats (0-based: major minor name reads ...)
PROCESS = ("start_ticks", "user_ticks", "system_ticks", "minor_faults", "major_faults", "threads", "rss_kb", "vsz_kb")
_STATUS = {"Threads": "threads", "VmRSS": "rss_kb", "VmSize": "vsz_kb"}
TEXT = {"interface": "VARCHAR", "disk": "VARCHAR", "command": "VARCHAR", "pid": "BIGINT"}


class _Columns:
    """The raw relation's columns, one row per interface, disk or process of a sample."""

    def __init__(self):
        self.data = {name: [] for name in ("line_no", "sampled_at", *TEXT, *NET, *DISK, *PROCESS)}

    def add(self, line_no: int, sampled_at, **values) -> None:
        for name, column in self.data.items():
            column.append(values.get(name, line_no if name == "line_no" else sampled_at if name == "sampled_at" else None))


def _net(line: str) -> dict:
    name, _, fields = line.partition(":")
    numbers = [int(token) for token in fields.split()]
    if not name.strip() or len(numbers) != 16:
        raise ValueError(f"expected an interface and 16 counters, found {len(numbers)}")
    return {"interface": name.strip(), **dict(zip(NET, (numbers[0], numbers[1], numbers[8], numbers[9])))}


def _disk(tokens: list[str]) -> dict:
    if len(tokens) < 14:
        raise ValueError(f"expected at least 14 fields (major minor name and 11 counters), found {len(tokens)}")
    return {"disk": tokens[2], **{name: int(tokens[i]) for name, i in zip(DISK, _DISK_FIELDS)}}


def _stat(line: str, page_kb: float) -> dict:
    """/proc/PID/stat: pid (comm) state ...; the name may hold spaces and parentheses, so split at the last `)`."""
    head, close, rest = line.rpartition(")")
    pid, _, command = head.partition(" (")
    fields = rest.split()
    if not close or not command or len(fields) < 22:
        raise ValueError(f"expected `pid (name) state` and at least 22 fields after the name, found {len(fields)}")
    # fields[0] is field 3 (state): minflt 10, majflt 12, utime 14, stime 15, num_threads 20, starttime 22,
    # vsize 23 (bytes), rss 24 (pages)
    return {"pid": int(pid), "command": command, "minor_faults": int(fields[7]), "major_faults": int(fields[9]),
            "user_ticks": int(fields[11]), "system_ticks": int(fields[12]), "threads": int(fields[17]),
            "start_ticks": int(fields[19]), "vsz_kb": int(fields[20]) / 1024, "rss_kb": int(fields[21]) * page_kb}


def read(ctx: SourceContext) -> SourceResult:
    """Load one procfs file into host_sample_facts; unreadable lines go to rejected_lines."""
    columns, rejects, header = _Columns(), Rejects(), {}
    sampled_at, section, unused_disks, process_row = None, None, set(), None
    with open_text(ctx.file) as handle:
        for line_no, line in enumerate(handle, start=1):
            line = line.rstrip("\n")
            try:
                if line.startswith("##"):
                    sampled_at, section, process_row, header = _marker(line, sampled_at, section, header)
                    if section == "pid":
                        process_row = len(columns.data["line_no"])  # the stat line that follows opens the row
                    continue
                if not line.strip():
                    continue
                if sampled_at is None:
                    raise ValueError("a line of no sample (no good `## at <time>` line before it)")
                if section == "net/dev":
                    if "|" not in line:
                        columns.add(line_no, sampled_at, **_net(line))
                elif section == "diskstats":
                    disk = _disk(line.split())
                    if any(disk[name] for name in DISK):
                        columns.add(line_no, sampled_at, **disk)
                    else:
                        unused_disks.add(disk["disk"])
                elif section == "pid" and process_row == len(columns.data["line_no"]):
                    columns.add(line_no, sampled_at, **_stat(line, header.get("page_size", 0) / 1024))
                elif section == "pid" and process_row is not None:
                    _status(line, columns, process_row)
                else:
                    raise ValueError(f"not part of a `## net/dev`, `## diskstats` or `## pid N` block ({section})")
            except ValueError as exc:
                rejects.append((line_no, f"procfs {section or 'file'}: {exc}", line))
                if line.startswith("## at"):  # the lines up to the next good time belong to no known time
                    sampled_at, section = None, None
    return _load(ctx, columns, rejects, header, unused_disks)


def _marker(line: str, sampled_at, section, header):
    """What a `##` line opens: the header, a sample (`## at`), or a block of it; raises ValueError."""
    tokens = line.split()
    if (match := _HEADER.match(line)) is not None:
        return sampled_at, None, None, {k: int(v) for k, v in (p.split("=") for p in match[1].split()) if v}
    if tokens[1:2] == ["at"] and len(tokens) == 3:
        moment = parse_iso(tokens[2], timezone.utc)
        if moment is None:
            raise ValueError(f"expected `## at <ISO-8601 time>`, got {tokens[2]!r}")
        return moment, "sample", None, header
    if sampled_at is None:
        raise ValueError("a block of no sample (no good `## at <time>` line before it)")
    if tokens[1:] in (["net/dev"], ["diskstats"]):
        return sampled_at, tokens[1], None, header
    if tokens[1:2] == ["pid"] and len(tokens) == 3 and tokens[2].isdigit():
        return sampled_at, "pid", None, header
    raise ValueError("expected `## procfs ...`, `## at <time>`, `## net/dev`, `## diskstats` or `## pid N`")


def _status(line: str, columns: _Columns, row: int) -> None:
    """A /proc/PID/status line (Threads, VmRSS, VmSize) sets that value of the process's row."""
    name, _, value = line.partition(":")
    tokens = value.split()
    if name not in _STATUS or not tokens or not tokens[0].isdigit():
        raise ValueError("expected `Threads: N`, `VmRSS: N kB` or `VmSize: N kB` after a process's stat line")
    columns.data[_STATUS[name]][row] = int(tokens[0])


def _load(ctx: SourceContext, columns: _Columns, rejects: Rejects, header: dict, unused_disks: set[str]) -> SourceResult:
    types = {"line_no": "BIGINT", "sampled_at": "TIMESTAMPTZ", **TEXT}
    raw = raw_relation(ctx.con, {name: (types.get(name, "DOUBLE"), values) for name, values in columns.data.items()})
    raw.create_view("raw_procfs", replace=True)
    build_model(ctx.con, "stg_procfs__samples", {"clk_tck": header.get("clk_tck"), "cpu_count": header.get("cpus"),
                                                 "mem_total_kb": header.get("mem_total_kb")})
    rows, notes = load_samples(ctx, ctx.con.table("stg_procfs__samples"), "own timestamps")
    drop_model(ctx.con, "stg_procfs__samples")
    ctx.con.execute("drop view raw_procfs")
    reject(ctx, rejects)
    if not header:
        notes.insert(0, "no `## procfs clk_tck=...` first line: process CPU and memory % unknown")
    if unused_disks:
        notes.append(f"{len(unused_disks)} disks never used (all counters 0) not loaded")
    return SourceResult(rows=rows, rejected=len(rejects), notes=tuple(notes))
