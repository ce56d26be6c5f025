"""Every public table, after ingesting the sample bundles, equals the recorded snapshot (rows and values)."""

from __future__ import annotations

import json

import pytest

from tests.golden.public_tables import SNAPSHOT, ingest_samples, snapshot


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    return snapshot(ingest_samples(tmp_path_factory.mktemp("golden")))


def test_the_same_tables_exist(found):
    assert sorted(found) == sorted(json.loads(SNAPSHOT.read_text()))


@pytest.mark.parametrize("table", sorted(json.loads(SNAPSHOT.read_text())))
def test_a_public_table_keeps_its_columns_and_rows(found, table):
    expected = json.loads(SNAPSHOT.read_text())[table]
    assert found[table]["columns"] == expected["columns"]
    assert found[table]["rows"] == expected["rows"]
    assert found[table]["sha256"] == expected["sha256"], f"{table}: same shape, other values"
