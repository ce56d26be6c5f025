"""The nightly warehouse the history tests share: written and ingested once per session (~30 s)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tasks.history.analysis import analyse_run
from tasks.warehouse.ingest import ingest_bundle
from tests.history_nights import write_night
from tests.lakeserver import new_lake, on_both_engines, pg_server, s3_endpoint  # noqa: F401 - the lake's fixtures
from tests.unit.history.nightly import NIGHTS, night, run_id


@pytest.fixture(scope="session")
def nightly_file(tmp_path_factory) -> Path:
    """Every night ingested; the history analysed the mornings after nights 11 (the shift of night 10 pending:
    two runs at its new level) and 12 (settled), and after the last night."""
    work = tmp_path_factory.mktemp("nights")
    path = work / "w.duckdb"
    for n in range(NIGHTS):
        ingest_bundle(write_night(work, n, night(n)), path, progress=lambda message: None)
        if n in (11, 12):
            analyse_run(path, run_id(n))
    analyse_run(path, run_id(NIGHTS - 1))
    return path


# the history's reading checks on a file and on a lake (its runs, marts and detected changes copied in once)
warehouse = on_both_engines("nightly_file", "nights", scope="session")


@pytest.fixture
def copy(nightly_file, tmp_path) -> Path:
    """A copy of the nightly warehouse file that a test may change."""
    target = tmp_path / "w.duckdb"
    shutil.copyfile(nightly_file, target)
    return target
