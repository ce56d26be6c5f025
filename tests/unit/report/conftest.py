"""One warehouse with every fixture run of tests/unit/report/runs.py, built once per session and engine.

`report_warehouse` is a DuckDB file and a DuckLake (PostgreSQL catalog, data in a local S3): the checks of
the marts, conclusions, capacity, comparisons and one whole report run on both. `report_file` is the file
alone, for the checks that change a copy or run the command line (on a lake each costs 15-45 s on a
loaded machine and tests no other engine code than the ones on both).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tasks.warehouse.connection import open_warehouse
from tests.lakeserver import lake_copy, new_lake, pg_server, s3_endpoint  # noqa: F401 - fixtures of the lake engine
from tests.unit.report.runs import build_warehouse


@pytest.fixture(scope="session")
def report_file(tmp_path_factory) -> Path:
    """pass-1, broken-1, sat-1, cmp-a, cmp-b and cmp-same, ingested in that order into a warehouse file."""
    return build_warehouse(tmp_path_factory.mktemp("report-runs"))


@pytest.fixture(scope="session", params=["file", "lake"])
def report_warehouse(request, report_file) -> Path | str:
    """The fixture runs in a file, or in a lake (its URL). The lake gets them as a lake ingest lands a run
    (built in a DuckDB file, then copied in by `warehouse copy`'s code), all six in one copy: 7 s, not 40."""
    return report_file if request.param == "file" else lake_copy(request, report_file, "report")


def query(warehouse: Path | str, sql: str, params: dict | None = None) -> pd.DataFrame:
    """A read-only query as a DataFrame."""
    with open_warehouse(warehouse) as con:
        return con.execute(sql, params).df()


def records(warehouse: Path | str, sql: str, params: dict | None = None) -> list[dict]:
    """A read-only query as plain Python values (None for NULL)."""
    with open_warehouse(warehouse) as con:
        cursor = con.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
