"""Every public table, after ingesting the sample bundles, equals the recorded snapshot (rows and values),
in a warehouse file and in a DuckLake (PostgreSQL catalog, data in a local S3) alike."""

from __future__ import annotations

import json

import pytest

from tests.golden.public_tables import SNAPSHOT, ingest_samples, snapshot
from tests.lakeserver import new_lake, pg_server, s3_endpoint  # noqa: F401 - fixtures of the lake engine


@pytest.fixture(scope="module", params=["file", "lake"])
def found(request, tmp_path_factory):
    if request.param == "file":
        return snapshot(request.getfixturevalue("sample_warehouse"))
    return snapshot(ingest_samples(tmp_path_factory.mktemp("golden-lake"), request.getfixturevalue("new_lake")("golden")))


def test_the_same_tables_exist(found):
    assert sorted(found) == sorted(json.loads(SNAPSHOT.read_text()))


@pytest.mark.parametrize("table", sorted(json.loads(SNAPSHOT.read_text())))
def test_a_public_table_keeps_its_columns_and_rows(found, table):
    expected = json.loads(SNAPSHOT.read_text())[table]
    assert found[table]["columns"] == expected["columns"]
    assert found[table]["rows"] == expected["rows"]
    assert found[table]["sha256"] == expected["sha256"], f"{table}: same shape, other values"
