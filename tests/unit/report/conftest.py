"""One warehouse with every fixture run of tests/unit/report/runs.py, built once per session."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.unit.report.runs import build_warehouse


@pytest.fixture(scope="session")
def report_warehouse(tmp_path_factory) -> Path:
    """pass-1, broken-1, sat-1, cmp-a, cmp-b and cmp-same, ingested in that order."""
    return build_warehouse(tmp_path_factory.mktemp("report-runs"))


def query(warehouse: Path, sql: str, params: dict | None = None) -> pd.DataFrame:
    """A read-only query as a DataFrame."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        return con.execute(sql, params).df()


def records(warehouse: Path, sql: str, params: dict | None = None) -> list[dict]:
    """A read-only query as plain Python values (None for NULL)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute("set TimeZone = 'UTC'")
        cursor = con.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
