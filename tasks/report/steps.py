"""Building and publishing a run's report as a Prefect task."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from tasks.report.build import publish_run_report
from tasks.store.base import StoreConfig
from tasks.warehouse.connection import warehouse_path


@task(name="report", task_run_name="report", cache_policy=NO_CACHE)
def report_task(run_id: str, warehouse: str | None, store: StoreConfig | None, work_dir: str) -> str:
    """Build the report, put it beside the stored bundle and link it from the run; returns a Markdown line."""
    return publish_run_report(run_id, warehouse_path(warehouse), store, Path(work_dir))
