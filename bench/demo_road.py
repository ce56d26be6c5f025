"""The demo's road from its last iteration's end to the report written (issue 22: under 10 s), step by step.

Runs `perfcampaign demo` (about 2 minutes) in a new process into a fresh warehouse and work folder (or into
--warehouse/--work-dir, which may hold earlier runs), reads its console log line by line as it is written, and
stamps each line with the wall clock and the CPU time of the demo's process (user + system, all its threads,
from /proc; the temporary Prefect server and the load's processes are not counted). Then prints each step
after the last iteration: closing the stage, storing the bundle, the ingest (its k6 JSON, access logs, other
sources and marts apart), validation, history, the report and the site. On a machine shared with other work
the CPU seconds are the figures to compare.

    .venv/bin/python bench/demo_road.py [--runs 1] [--warehouse W --work-dir D] [--log demo.log] [--code CHECKOUT]

`--code`: run the demo of another checkout (e.g. main's, `git archive main | tar -x -C DIR`) with this venv, to
compare the two on the same machine in the same minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
FINISHED = re.compile(r"\| Task run '([^']+)' - Finished in state")
READING = re.compile(r"\| Task run 'ingest' - reading \S+ \((\w+),")
INGEST_LINE = re.compile(r"\| Task run 'ingest' - (reading|checking|clock of|building marts)")
ROWS = re.compile(r"\| Task run 'ingest' -   ([\d,]+) rows, ")
CLOSING = ("stop-monitors", "collect", "teardown", "write-bundle")


def _cpu(pid: int) -> float:
    """User + system seconds of the process and all its threads so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def run_demo(code: Path, warehouse: Path, work_dir: Path, log: Path | None) -> list[tuple[float, float, str]]:
    """Run the demo; every console line with the wall clock and the demo process's CPU seconds when it came."""
    command = [sys.executable, "-m", "tasks.cli.main", "demo", "--warehouse", str(warehouse), "--work-dir", str(work_dir)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "400", "PYTHONPATH": str(code)}
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=work_dir.parent,
                          env=env) as demo:
        for line in demo.stdout:
            try:
                cpu = _cpu(demo.pid)
            except (FileNotFoundError, ProcessLookupError):
                cpu = float("nan")
            lines.append((time.monotonic(), cpu, line.rstrip("\n")))
    if log:
        log.write_text("\n".join(line for _, _, line in lines) + "\n")
    if demo.returncode != 0:
        tail = "\n".join(line for _, _, line in lines[-30:])
        raise SystemExit(f"the demo failed ({demo.returncode}):\n{tail}")
    return lines


def road(lines: list[tuple[float, float, str]]) -> list[tuple[str, float, float]]:
    """(step, wall s, CPU s) from the last iteration's end to the report written, then the site."""
    ends = [i for i, (_, _, line) in enumerate(lines) if re.search(r"Task run 'iteration-\d+' - Finished", line)]
    if not ends:
        raise SystemExit("no iteration finished in the demo's log")
    steps: dict[str, list[float]] = {}
    rows: dict[str, int] = {}  # rows read per source kind
    last_wall, last_cpu = lines[ends[-1]][:2]
    ingest_part = None  # the ingest's current piece: a source kind, "checks and clocks" or "marts"

    def close(name: str, wall: float, cpu: float) -> None:
        nonlocal last_wall, last_cpu
        totals = steps.setdefault(name, [0.0, 0.0])
        totals[0] += wall - last_wall
        totals[1] += cpu - last_cpu
        last_wall, last_cpu = wall, cpu

    for wall, cpu, line in lines[ends[-1] + 1:]:
        finished, piece, read = FINISHED.search(line), INGEST_LINE.search(line), ROWS.search(line)
        if read and ingest_part:
            rows[ingest_part] = rows.get(ingest_part, 0) + int(read.group(1).replace(",", ""))
        if piece:
            close(f"  ingest: {ingest_part}" if ingest_part else "  ingest: open, manifest", wall, cpu)
            reading = READING.search(line)
            ingest_part = (reading.group(1) if reading else
                           "marts" if piece.group(1) == "building marts" else "checks, clocks")
        elif finished:
            task = finished.group(1)
            if task == "ingest":
                close(f"  ingest: {ingest_part}", wall, cpu)
            else:
                close("close stage (" + ", ".join(CLOSING) + ")" if task in CLOSING else task, wall, cpu)
            if task == "site":
                break
    named = {f"  ingest: {kind}": f"  ingest: {kind} ({count:,} rows)" for kind, count in rows.items()}
    return [(named.get(name, name), wall, cpu) for name, (wall, cpu) in steps.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="demos one after another into the same warehouse")
    parser.add_argument("--warehouse", type=Path, help="default: a fresh one in a temporary folder")
    parser.add_argument("--work-dir", type=Path)
    parser.add_argument("--log", type=Path, help="write the last demo's console log here")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose demo to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="perfcampaign-road-") as folder:
        warehouse = args.warehouse or Path(folder) / "w.duckdb"
        work_dir = (args.work_dir or Path(folder) / "work").resolve()
        work_dir.mkdir(parents=True, exist_ok=True)
        for number in range(1, args.runs + 1):
            lines = run_demo(args.code.resolve(), warehouse.resolve(), work_dir, args.log)
            rows = road(lines)
            ingest = [(w, c) for name, w, c in rows if name.startswith("  ingest")]
            total = [(w, c) for name, w, c in rows if name != "site"]
            print(f"demo {number} of {args.code}: last iteration end -> report written   wall s   CPU s")
            for name, wall, cpu in rows:
                if name == "validate":  # after the ingest's pieces, their sum
                    print(f"{'ingest (sum of the above)':<46}{sum(w for w, _ in ingest):>8.2f}{sum(c for _, c in ingest):>8.2f}")
                print(f"{name:<46}{wall:>8.2f}{cpu:>8.2f}")
            print(f"{'=> to the report written (without site)':<46}{sum(w for w, _ in total):>8.2f}"
                  f"{sum(c for _, c in total):>8.2f}   (load average {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
