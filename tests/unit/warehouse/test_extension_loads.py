"""A lake's extensions are loaded from their packages with DuckDB's signature check once a process: a file that
no check passed is never loaded, even on a connection that allows unsigned extensions for the checked ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from tasks.warehouse import engines
from tasks.warehouse.engines import UNCHECKED_LOADS, attach_lake, extension_file, load_extension, parse_warehouse


@pytest.fixture
def copied(tmp_path, monkeypatch) -> Path:
    """httpfs's file copied where extension_file finds it, this test's own (not checked in this process yet)."""
    copy = tmp_path / "httpfs.duckdb_extension"
    shutil.copyfile(extension_file("httpfs"), copy)
    monkeypatch.setattr(engines, "extension_file", lambda name: str(copy))
    return copy


def _tampered(path: Path) -> bytes:
    """The file's bytes with one bit of its middle flipped: its signature no longer matches."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    return bytes(data)


def _loaded(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("select loaded from duckdb_extensions() where extension_name = 'httpfs'").fetchone()[0]


def test_a_tampered_file_is_refused_on_a_connection_that_allows_unsigned_ones(copied):
    copied.write_bytes(_tampered(copied))
    with duckdb.connect(config=UNCHECKED_LOADS) as con:
        with pytest.raises(duckdb.IOException, match="signature"):
            load_extension(con, "httpfs")
        assert not _loaded(con)


def test_a_checked_file_changed_afterwards_is_checked_again(copied):
    with duckdb.connect(config=UNCHECKED_LOADS) as con:
        load_extension(con, "httpfs")
        assert _loaded(con)
    replacement = copied.with_suffix(".new")
    replacement.write_bytes(_tampered(copied))
    replacement.replace(copied)  # same path and size, as a reinstall leaves it (writing the loaded file in place
    # would change the library this process has mapped)
    with duckdb.connect(config=UNCHECKED_LOADS) as con:
        with pytest.raises(duckdb.IOException, match="signature"):
            load_extension(con, "httpfs")


def test_a_lake_connection_checks_every_later_load(tmp_path):
    """attach_lake ends by requiring signatures again: a user's LOAD afterwards meets DuckDB's own check."""
    lake = parse_warehouse(f"ducklake:{tmp_path / 'catalog.ducklake'} data_path={tmp_path / 'data'}")
    tampered = tmp_path / "httpfs.duckdb_extension"
    tampered.write_bytes(_tampered(Path(extension_file("httpfs"))))
    with duckdb.connect(config=UNCHECKED_LOADS) as con:
        attach_lake(con, lake, write=True)
        assert not con.execute("select current_setting('allow_unsigned_extensions')").fetchone()[0]
        with pytest.raises(duckdb.IOException, match="signature"):
            con.execute(f"load '{tampered}'")
