"""Prefect flow: load a stored bundle into the warehouse, so any past run can be re-analysed from the UI."""

from __future__ import annotations

from prefect import flow

from tasks.history.steps import history_task
from tasks.validate.steps import validate_task
from tasks.warehouse.steps import ingest_task


@flow(name="ingest", log_prints=True)
def ingest_flow(bundle: str, warehouse: str | None = None) -> str:
    """Load a bundle into the warehouse, check its data, re-analyse its campaign's history; returns the run_id."""
    report = ingest_task(bundle, warehouse)
    validate_task(report.run_id, warehouse)
    history_task(report.run_id, warehouse)
    return report.run_id


if __name__ == "__main__":
    import sys

    ingest_flow(sys.argv[1])
