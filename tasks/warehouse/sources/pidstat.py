"""Reader for `pidstat` text (`kind: pidstat`): CPU, memory, threads and open files per process.

Our monitor runs `pidstat -h -u -r -v` (one line per process per interval, every report's columns side by
side) with `TZ=UTC LC_ALL=C S_TIME_FORMAT=ISO`; without `-h` each report is a block of its own, and its
lines are loaded all the same (a sample's columns then come from several lines). With `-t`, a process line
(`TID` = `-`) is followed by one line per thread (`TGID` = `-`): those are kept with their `tid` and the
process's pid, and count the threads when `-v`'s `threads` column is absent. `%CPU` is of one CPU (a
process on 4 CPUs shows up to 400, as pidstat prints it without `-I`); RSS and VSZ are in kB (1024 bytes).
Columns of other reports (`-d`, `-w`) are noted and not loaded.
"""

from __future__ import annotations

from tasks.bundle.files import open_text
from tasks.warehouse.sources.base import SourceContext, SourceResult
from tasks.warehouse.sources.host_metrics import manifest_zone
from tasks.warehouse.sources.sysstat_text import SysstatText, load_sysstat, number, parse_sysstat

# raw name <- pidstat's column names (sysstat 10 to 12)
VALUES = {
    "process_cpu_user_pct": "%usr", "process_cpu_system_pct": "%system", "process_cpu_wait_pct": "%wait",
    "cpu_pct": "%CPU", "minor_faults_per_s": "minflt/s", "major_faults_per_s": "majflt/s", "vsz_kb": "VSZ",
    "rss_kb": "RSS", "mem_pct": "%MEM", "threads": "threads", "open_files": "fd-nr",
}
KNOWN = {"UID", "USER", "PID", "TGID", "TID", "%guest", "CPU", "Command", *VALUES.values()}


def read(ctx: SourceContext) -> SourceResult:
    """Load one pidstat file into host_sample_facts; unreadable lines go to rejected_lines."""
    parsed = SysstatText()
    columns = {name: [] for name in ("line_no", "sampled_at", "command", "pid", "tid", *VALUES)}
    ignored: set[str] = set()
    process: float | None = None  # the pid of the last process line: the TGID of the thread lines after it
    with open_text(ctx.file) as handle:
        for row in parse_sysstat(handle, manifest_zone(ctx), "pidstat", parsed):
            ignored |= set(row.values) - KNOWN
            try:
                pid = number(row, "PID") if "PID" in row.values else number(row, "TGID")
                tid = number(row, "TID")
                values = {raw: number(row, name) for raw, name in VALUES.items()}
            except ValueError as exc:
                parsed.rejects.append((row.line_no, f"not a number: {exc}", row.text))
                continue
            command = row.values.get("Command", "").removeprefix("|__")
            if pid is None and (tid is None or process is None):
                parsed.rejects.append((row.line_no, "neither a PID nor a thread of a process line before it", row.text))
                continue
            process = pid if pid is not None else process
            columns["line_no"].append(row.line_no)
            columns["sampled_at"].append(row.sampled_at)
            columns["command"].append(command)
            columns["pid"].append(process)
            columns["tid"].append(tid if pid is None else None)
            for raw in VALUES:
                columns[raw].append(values[raw])
    rows, notes = load_sysstat(ctx, "pidstat", parsed, columns,
                               {"command": "VARCHAR", "pid": "BIGINT", "tid": "BIGINT"})
    if ignored:
        notes.insert(0, f"pidstat columns not loaded: {', '.join(sorted(ignored))}")
    return SourceResult(rows=rows, rejected=len(parsed.rejects), notes=tuple(notes))
