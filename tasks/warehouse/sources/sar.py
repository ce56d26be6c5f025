"""Reader for `sar -n DEV -d` text (`kind: sar`): network interfaces and block devices, one row per line.

Why text and not `sadf` over sar's binary file: the bundle stays readable without sysstat (the binary
format changes between sysstat versions and only a matching `sadf` reads it), the header lines name every
column, and the first line gives the date and the CPU count. Our monitor runs `sar` with `TZ=UTC`,
`LC_ALL=C` (24-hour times, decimal points) and `S_TIME_FORMAT=ISO` (an ISO date in the first line); files
from elsewhere are read in the source's `timezone` (default: the manifest's). Columns are read by header
name: sysstat 12's `rkB/s wkB/s aqu-sz` and the `rd_sec/s wr_sec/s avgqu-sz` of sysstat 10 alike. Blocks
of other reports (`-u`, `-r`, ...) in the same file are counted in a note and not loaded. sar's `kB` is
1024 bytes; every rate is an average over the interval that ends at the line's time.
"""

from __future__ import annotations

from collections import Counter

from tasks.bundle.files import open_text
from tasks.warehouse.sources.base import SourceContext, SourceResult
from tasks.warehouse.sources.host_metrics import manifest_zone
from tasks.warehouse.sources.sysstat_text import SysstatText, load_sysstat, number, parse_sysstat

# The block a header opens (its first column), the name column it has, and its values: raw name <- sar names.
BLOCKS = {
    "IFACE": ("interface", {
        "rx_packets_per_s": ("rxpck/s",), "tx_packets_per_s": ("txpck/s",), "rx_kb_per_s": ("rxkB/s",),
        "tx_kb_per_s": ("txkB/s",), "if_util_pct": ("%ifutil",),
    }),
    "DEV": ("disk", {
        "transfers_per_s": ("tps",), "read_kb_per_s": ("rkB/s",), "write_kb_per_s": ("wkB/s",),
        "read_sectors_per_s": ("rd_sec/s",), "write_sectors_per_s": ("wr_sec/s",),
        "queue_size": ("aqu-sz", "avgqu-sz"), "await_ms": ("await",), "util_pct": ("%util",),
    }),
}
VALUES = tuple(name for _, values in BLOCKS.values() for name in values)


def read(ctx: SourceContext) -> SourceResult:
    """Load one sar file into host_sample_facts; unreadable lines go to rejected_lines."""
    parsed = SysstatText()
    columns = {name: [] for name in ("line_no", "sampled_at", "interface", "disk", *VALUES)}
    skipped: Counter[str] = Counter()
    with open_text(ctx.file) as handle:
        for row in parse_sysstat(handle, manifest_zone(ctx), "sar", parsed):
            if row.block not in BLOCKS:
                skipped[row.block] += 1
                continue
            name_column, wanted = BLOCKS[row.block]
            try:
                values = {raw: next((number(row, n) for n in names if n in row.values), None)
                          for raw, names in wanted.items()}
            except ValueError as exc:
                parsed.rejects.append((row.line_no, f"{row.block} block: not a number: {exc}", row.text))
                continue
            columns["line_no"].append(row.line_no)
            columns["sampled_at"].append(row.sampled_at)
            for text_column in ("interface", "disk"):
                columns[text_column].append(row.values[row.block] if text_column == name_column else None)
            for raw in VALUES:
                columns[raw].append(values.get(raw))
    rows, notes = load_sysstat(ctx, "sar", parsed, columns, {"interface": "VARCHAR", "disk": "VARCHAR"})
    if skipped:
        notes.insert(0, "rows of other sar reports not loaded: "
                     + ", ".join(f"{count} under {block}" for block, count in sorted(skipped.items())))
    return SourceResult(rows=rows, rejected=len(parsed.rejects), notes=tuple(notes))
