"""Defaults every package shares, each defined once: where the repository, the work folder and the warehouse are."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SQL_DIR = REPO / "sql"
EXPECTATIONS_DIR = REPO / "expectations"
DEMO_CAMPAIGN = REPO / "campaigns" / "demo.yaml"

WORK_DIR = "perfcampaign-work"  # local bundles and reports of campaign runs
DEFAULT_WAREHOUSE = "perfcampaign.duckdb"  # unless --warehouse or $PERFCAMPAIGN_WAREHOUSE says otherwise
VALIDATION_PAGE = "validation.html"  # the data expectations' page, beside the report
WRITER_WAIT_S = 600.0  # longest a writer waits for the warehouse's readers and writers; $PERFCAMPAIGN_WRITER_WAIT_S
MEMORY_LIMIT = "3GB"  # DuckDB's memory_limit on a writing connection (an ingest spills past it); $PERFCAMPAIGN_MEMORY_LIMIT

HIGHER_IS_BETTER = frozenset({"calls_per_s"})  # metrics whose fall is the regression (latency, errors: a rise)
COMPARE_ALPHA = 0.01  # significance level of `compare` and the report's comparison with a baseline


def artifact_key(kind: str, name: str) -> str:
    """A Prefect artifact key from a kind and a run or campaign name: keys allow lower-case letters, digits
    and dashes only (a campaign may be named `Echo_v1.2`), at most 100 characters."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{kind}-{name}".lower()).strip("-")[:100]
