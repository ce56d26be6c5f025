"""The warehouse setting: a file or a DuckLake URL, never with credentials; a local-catalog lake holds the
same public tables as a file after the same ingest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tasks.warehouse.engines import Lake, LakeSettingError, parse_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.golden.public_tables import SAMPLES, snapshot


def test_a_plain_path_is_a_file_warehouse():
    assert parse_warehouse("runs/perf.duckdb") == Path("runs/perf.duckdb")


def test_a_postgres_lake_url_splits_into_libpq_keywords_and_our_options():
    lake = parse_warehouse("ducklake:postgres:dbname=perf host=db port=5433 data_path=s3://b/lake endpoint_url=http://m:9000")
    assert isinstance(lake, Lake) and lake.is_postgres
    assert lake.catalog == "postgres:dbname=perf host=db port=5433"
    assert lake.data_path == "s3://b/lake/"  # a folder: DuckLake appends file names to it
    assert lake.options["endpoint_url"] == "http://m:9000"
    assert str(lake) == lake.url and lake.catalog_file is None
    blocks = parse_warehouse(f"{lake.url} password_block=pg-pass s3_credentials_block=s3-keys")
    assert blocks.catalog == lake.catalog  # block names are ours, never libpq's
    assert (blocks.options["password_block"], blocks.options["s3_credentials_block"]) == ("pg-pass", "s3-keys")


def test_a_local_catalog_keeps_its_data_beside_it_unless_told():
    lake = parse_warehouse("ducklake:/srv/cat.ducklake")
    assert lake.catalog_file == Path("/srv/cat.ducklake") and lake.data_path == "/srv/cat.ducklake.files/"


@pytest.mark.parametrize("url, message", [
    ("ducklake:postgres:dbname=p password=hunter2 data_path=s3://b/", "password= does not belong"),
    ("ducklake:postgres:data_path=s3://b/", "expected ducklake:postgres:dbname"),
    ("ducklake:/srv/cat.ducklake host=db", "unknown option 'host'"),
    ("ducklake:postgres:dbname=p data_path", "is not key=value"),
    ("ducklake:/srv/cat.ducklake password_block=pg", "password_block= is the password of a ducklake:postgres:"),
])
def test_a_bad_lake_url_is_refused_and_never_echoes_a_secret(url, message):
    with pytest.raises(LakeSettingError, match=message) as error:
        parse_warehouse(url)
    assert "hunter2" not in str(error.value)


def test_a_postgres_lake_without_a_data_path_says_what_it_needs():
    with pytest.raises(LakeSettingError, match="needs data_path"):
        _ = parse_warehouse("ducklake:postgres:dbname=p").data_path


def test_a_local_catalog_lake_holds_the_same_public_tables_as_a_file(tmp_path):
    bundle = shutil.copytree(SAMPLES / "bundle-echo", tmp_path / "echo")
    lake = f"ducklake:{tmp_path / 'catalog.ducklake'}"
    for warehouse in (tmp_path / "file.duckdb", lake):
        for _ in range(2):  # a re-ingest replaces the run (its sources under new keys, in both)
            ingest_bundle(bundle, warehouse, progress=lambda _: None)
    assert snapshot(lake) == snapshot(tmp_path / "file.duckdb")
