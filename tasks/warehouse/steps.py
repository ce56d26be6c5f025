"""Loading a bundle as a Prefect task, its summary published as a Markdown artifact keyed by the run."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from tasks.settings import artifact_key
from tasks.warehouse.connection import warehouse_path
from tasks.warehouse.ingest import IngestReport, ingest_bundle
from tasks.warehouse.verdicts import verdicts_markdown


def ingest_markdown(report: IngestReport) -> str:
    """What was loaded and whether the requirements hold, for the Prefect UI."""
    return "\n".join([
        f"# Run `{report.run_id}`", "",
        f"Loaded into `{report.warehouse}` in {report.seconds:.1f} s.", "",
        "| side | requests |", "| --- | ---: |",
        *(f"| {side} | {count:,} |" for side, count in report.requests_by_side.items()), "",
        f"Requests outside every iteration: {report.unmapped_requests:,}. Rejected lines: {report.rejected_lines:,}.",
        "", verdicts_markdown(report.verdicts),
    ])


@task(name="ingest", task_run_name="ingest", cache_policy=NO_CACHE)
def ingest_task(bundle: str, warehouse: str | None = None, bundle_uri: str | None = None) -> IngestReport:
    """Load one bundle folder (the same code path as `perfcampaign ingest`) and publish its summary."""
    report = ingest_bundle(Path(bundle), warehouse_path(warehouse), bundle_uri=bundle_uri)
    create_markdown_artifact(key=artifact_key("ingest", report.run_id), markdown=ingest_markdown(report),
                             description=f"ingest of {report.run_id}")
    return report
