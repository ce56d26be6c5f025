"""One warehouse with every fixture run of tests/unit/report/runs.py, built once per session and engine: a
DuckDB file and a DuckLake (PostgreSQL catalog, data in a local S3) answer every report check alike."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pandas as pd
import pytest

from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.engines import Lake, parse_warehouse
from tasks.warehouse.moving import copy_runs
from tests.lakeserver import new_lake, pg_server, s3_endpoint  # noqa: F401 - fixtures of the lake engine
from tests.unit.report.runs import build_warehouse

_COPIES = itertools.count()


@pytest.fixture(scope="session")
def report_file(tmp_path_factory) -> Path:
    """pass-1, broken-1, sat-1, cmp-a, cmp-b and cmp-same, ingested in that order into a warehouse file."""
    return build_warehouse(tmp_path_factory.mktemp("report-runs"))


@pytest.fixture(scope="session", params=["file", "lake"])
def report_warehouse(request, report_file) -> Path | str:
    """The fixture runs in a file, or in a lake (its URL). The lake gets them as a lake ingest lands a run
    (built in a DuckDB file, then copied in by `warehouse copy`'s code), all six in one copy: 7 s, not 40."""
    if request.param == "file":
        return report_file
    lake = request.getfixturevalue("new_lake")("report")
    copy_runs(report_file, lake)
    return lake


@pytest.fixture
def writable_copy(report_warehouse, request, tmp_path):
    """`copy(*run_ids)`: a copy of the report warehouse a test may change, on the same engine (a lake copy
    holds only the named runs: `warehouse copy` per run costs a few seconds)."""

    def copy(*run_ids: str) -> Path | str:
        if not isinstance(parse_warehouse(report_warehouse), Lake):
            shutil.copyfile(report_warehouse, tmp_path / "w.duckdb")
            return tmp_path / "w.duckdb"
        lake = request.getfixturevalue("new_lake")(f"report_copy_{next(_COPIES)}")
        copy_runs(report_warehouse, lake, list(run_ids))
        return lake

    return copy


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
