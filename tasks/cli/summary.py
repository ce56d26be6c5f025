"""The short summary an ingest prints: iterations, requests per side, rejected lines, verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks.cli.output import echo

if TYPE_CHECKING:  # the ingest (pydantic, the readers) is loaded by the command that ingests, not at start-up
    from tasks.warehouse.ingest import IngestReport


def print_ingest_report(report: IngestReport) -> None:
    """One screen about what was loaded and whether the requirements hold."""
    from tasks.warehouse.verdicts import expectation_text, verdict_word  # heavy: duckdb

    sides = ", ".join(f"{count:,} {side}" for side, count in report.requests_by_side.items()) or "none"
    echo(f"run {report.run_id}: loaded into {report.warehouse} in {report.seconds:.1f} s")
    echo(f"  requests: {sides}; outside every iteration: {report.unmapped_requests:,}")
    echo(f"  rejected lines: {report.rejected_lines:,} (see table rejected_lines)")
    for source in report.sources:
        for note in source.notes:  # most readers name the file in their notes already
            echo(f"  {note}" if note.startswith(f"{source.path}:") else f"  {source.path}: {note}")
    for v in report.verdicts:
        worst = "no data" if v.measured is None else f"worst {v.measured:.4g}"
        reach = f", holds up to {v.reach}" if v.reach else ""
        expectation = expectation_text(v.expect_rule, v.expect_passed, "shout")
        echo(f"  {v.requirement_id}: {v.rule}: {verdict_word(v.passed, 'shout')} ({worst}{reach})"
             + (f"; {expectation}" if expectation else ""))
