"""Prefect flow: load a stored bundle into the warehouse, so any past run can be re-analysed from the UI."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact

from tasks.validate.steps import validate_task
from tasks.warehouse.connection import warehouse_path
from tasks.warehouse.ingest import IngestReport, ingest_bundle


@task(name="ingest-bundle")
def ingest_task(bundle: str, warehouse: str | None = None) -> IngestReport:
    """Load one bundle folder (the same code path as `perfcampaign ingest`)."""
    return ingest_bundle(Path(bundle), warehouse_path(warehouse))


def _markdown(report: IngestReport) -> str:
    lines = [
        f"# Run `{report.run_id}`",
        "",
        f"Loaded into `{report.warehouse}` in {report.seconds:.1f} s.",
        "",
        "| side | requests |",
        "| --- | ---: |",
        *(f"| {side} | {count:,} |" for side, count in report.requests_by_side.items()),
        "",
        f"Requests outside every iteration: {report.unmapped_requests:,}. Rejected lines: {report.rejected_lines:,}.",
        "",
        "| requirement | side | rule | worst | verdict | holds up to iteration |",
        "| --- | --- | --- | ---: | --- | ---: |",
    ]
    for requirement, side, metric, op, threshold, measured, passed, up_to, _cps in report.verdicts:
        verdict = "not judged" if passed is None else ("holds" if passed else "**BROKEN**")
        worst = "" if measured is None else f"{measured:.4g}"
        lines.append(f"| {requirement} | {side} | {metric} {op} {threshold:g} | {worst} | {verdict} | {up_to or ''} |")
    return "\n".join(lines)


@flow(name="ingest", log_prints=True)
def ingest_flow(bundle: str, warehouse: str | None = None) -> str:
    """Load a bundle into the warehouse and publish its summary as an artifact; returns the run_id."""
    report = ingest_task(bundle, warehouse)
    create_markdown_artifact(key=f"ingest-{report.run_id}".lower().replace("_", "-").replace(".", "-"),
                             markdown=_markdown(report), description=f"ingest of {report.run_id}")
    validate_task(report.run_id, warehouse)  # after the ingest: data expectations, validation page
    return report.run_id


if __name__ == "__main__":
    import sys

    ingest_flow(sys.argv[1])
