"""Prefect task around `validate_run`: validate a run after its ingest and publish the result as an artifact."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from tasks.validate.run import ValidationSummary, validate_run
from tasks.warehouse.connection import warehouse_path
from tasks.warehouse.engines import Lake
from tasks.settings import artifact_key


def validation_dir(warehouse: Path | Lake, run_id: str) -> Path:
    """Where a flow writes a run's validation page when no folder is given: beside the warehouse file, or in
    the current folder's perfcampaign-work/ for a lake (which is no folder)."""
    folder = Path(warehouse).resolve().parent if isinstance(warehouse, Path) else Path("perfcampaign-work")
    return folder / "validation" / run_id


@task(name="validate", task_run_name="validate", cache_policy=NO_CACHE)
def validate_task(run_id: str, warehouse: str | None = None, out_dir: str | None = None) -> ValidationSummary:
    """Run the data expectations on one run; the Markdown summary becomes an artifact keyed by the run."""
    path = warehouse_path(warehouse)
    summary = validate_run(path, run_id, Path(out_dir) if out_dir else validation_dir(path, run_id))
    create_markdown_artifact(key=artifact_key("validation", run_id), markdown=summary.markdown(), description=f"data validation of {run_id}")
    return summary
