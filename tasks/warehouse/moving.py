"""Copy runs between warehouses (a file and a lake, either way) and keep a lake tidy.

A copy attaches the source read-only beside the destination and, in one destination transaction, replaces
each run's rows in every table keyed by run_id (base tables, marts, and any other, e.g. triage) and the
rows keyed by its sources (requests, k6 metric points), under source keys the destination reserves. Row counts of every copied table are
compared at the end; a difference rolls the whole copy back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from tasks.warehouse.connection import (
    STAGED_PREFIX,
    WarehouseError,
    make_schema,
    open_warehouse,
    transaction,
)
from tasks.warehouse.engines import Lake, attach_lake, parse_warehouse
from tasks.warehouse.lake import (
    reserve_source_keys,
    retry_on_conflict,
)

SOURCE = "copy_source"
INTERNAL = {"warehouse_meta", "lake_source_keys"}  # each warehouse its own


class OtherMartModels(WarehouseError):
    """The two warehouses' marts were built by different versions of the mart models."""


@dataclass
class CopyReport:
    runs: list[str]
    rows_by_table: dict[str, int]


def _tables(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, list[str]]:
    rows = con.execute(
        "select table_name, list(column_name order by ordinal_position) from information_schema.columns "
        "where table_catalog = $catalog and table_schema = 'main' and table_name in "
        "(select table_name from information_schema.tables where table_catalog = $catalog and table_type = 'BASE TABLE') "
        "group by table_name", {"catalog": catalog}).fetchall()
    return {name: columns for name, columns in rows if name not in INTERNAL}


def _attach_source(con: duckdb.DuckDBPyConnection, source: Path | Lake) -> None:
    if isinstance(source, Lake):
        attach_lake(con, source, write=False, alias=SOURCE)
    elif not Path(source).exists():
        raise WarehouseError(f"no warehouse at {source}")
    else:
        con.execute(f"attach '{str(source).replace(chr(39), chr(39) * 2)}' as {SOURCE} (read_only)")


def _counts(con: duckdb.DuckDBPyConnection, target: str, tables: dict[str, list[str]]) -> dict[str, tuple[int, int]]:
    """Rows of the copied runs per table, in the source and in the destination, in one query."""
    def rows(catalog: str, table: str, columns: list[str]) -> str:
        if "run_id" in columns:
            where = "run_id in (select run_id from copied_runs)"
        else:  # request_facts, k6_metric_points: their run is their source's
            where = (f"source_key in (select source_key from {catalog}.main.sources "
                     "where run_id in (select run_id from copied_runs))")
        return f"(select count(*) from {catalog}.main.{table} where {where})"

    query = " union all ".join(f"select '{table}', {rows(SOURCE, table, columns)}, {rows(target, table, columns)}"
                               for table, columns in tables.items())
    return {table: (theirs, ours) for table, theirs, ours in con.execute(query).fetchall()}


def copy_runs(source: str | Path | Lake, destination: str | Path | Lake, run_ids: list[str] | None = None) -> CopyReport:
    """Copy runs (all of the source's when none are named) into the destination, replacing them there."""
    source, destination = parse_warehouse(source), parse_warehouse(destination)
    if str(source) == str(destination):
        raise WarehouseError("copy: the source and the destination are the same warehouse")
    with open_warehouse(destination, write=True) as con:
        _attach_source(con, source)
        target = con.execute("select current_database()").fetchone()[0]
        available = [r for (r,) in con.execute(  # a run staged by an ingest that died is no run (ingest.py)
            f"select run_id from {SOURCE}.main.runs where not starts_with(run_id, $staged) order by started_at",
            {"staged": STAGED_PREFIX}).fetchall()]
        runs = run_ids or available
        missing = sorted(set(runs) - set(available))
        if missing:
            raise WarehouseError(f"copy: no run {', '.join(missing)} in {source}")
        con.execute("create or replace temp table copied_runs as select unnest($runs::varchar[]) as run_id",
                    {"runs": runs})
        report = retry_on_conflict(lambda: _copy(con, target, runs), "copy")
        # views over mart tables the copy made first (series over series_values) are made now
        make_schema(con)
        return report


def _copy(con: duckdb.DuckDBPyConnection, target: str, runs: list[str]) -> CopyReport:
    theirs = _tables(con, SOURCE)
    old_keys = [k for (k,) in con.execute(
        f"select source_key from {SOURCE}.main.sources where run_id in (select run_id from copied_runs) "
        "order by source_key").fetchall()]
    new_keys = reserve_source_keys(con, len(old_keys))
    con.execute("create or replace temp table key_map as select unnest($old::integer[]) as old_key, "
                "unnest($new::integer[]) as new_key", {"old": old_keys, "new": new_keys})
    copied = {}
    with transaction(con):
        ours = _tables(con, target)  # in the transaction: what it sees is what it writes to
        _adopt_marts_fingerprint(con, target)
        # the runs' old rows here: requests first (through their sources), then every table keyed by run_id;
        # none when no run is here yet (one transaction wrote all of a run's rows, so no table holds any)
        if con.execute(f"select count(*) from {target}.main.runs where run_id in (select run_id from copied_runs)"
                       ).fetchone()[0]:
            for table in sorted(table for table, columns in ours.items() if _by_source(columns)):
                con.execute(f"delete from {target}.main.{table} where source_key in (select source_key from "
                            f"{target}.main.sources where run_id in (select run_id from copied_runs))")
            for table in sorted(table for table, columns in ours.items() if "run_id" in columns):
                con.execute(f"delete from {target}.main.{table} where run_id in (select run_id from copied_runs)")
        for table, columns in sorted(theirs.items()):
            if "run_id" not in columns and not _by_source(columns):
                continue
            if table not in ours:
                con.execute(f"create table {target}.main.{table} as select * from {SOURCE}.main.{table} limit 0")
            keyed = "source_key" in columns
            select = ("select t.* replace (m.new_key as source_key) from {src} t join key_map m on t.source_key = m.old_key"
                      if keyed else "select t.* from {src} t where t.run_id in (select run_id from copied_runs)")
            if keyed and "run_id" in columns:
                select += " where t.run_id in (select run_id from copied_runs)"
            con.execute(f"insert into {target}.main.{table} by name " + select.format(src=f"{SOURCE}.main.{table}"))
            copied[table] = columns
        counts = _counts(con, target, copied)
        unequal = {table: pair for table, pair in counts.items() if pair[0] != pair[1]}
        if unequal:
            raise WarehouseError("copy: row counts differ, nothing copied: " + ", ".join(
                f"{table} {a} in the source, {b} copied" for table, (a, b) in sorted(unequal.items())))
    return CopyReport(runs, {table: pair[0] for table, pair in counts.items()})


def _by_source(columns: list[str]) -> bool:
    """A table whose rows belong to a run through their source (request_facts, k6_metric_points)."""
    return "source_key" in columns and "run_id" not in columns


def _adopt_marts_fingerprint(con: duckdb.DuckDBPyConnection, target: str) -> None:
    """A destination without marts yet takes the source's; one whose marts other models built refuses rows
    of another shape (an ingest then builds the run in the destination itself, which rebuilds every run)."""
    query = "select value from {}.main.warehouse_meta where key = 'marts_fingerprint'"
    theirs, ours = (con.execute(query.format(catalog)).fetchone() for catalog in (SOURCE, target))
    if ours is None and theirs is not None:
        con.execute(f"insert into {target}.main.warehouse_meta values ('marts_fingerprint', $value)",
                    {"value": theirs[0]})
    elif ours is not None and theirs is not None and ours != theirs:
        raise OtherMartModels("copy: the destination's marts were built by other mart models than the source's "
                              "(ingest one run there, which rebuilds its marts, then copy again)")


def maintain(warehouse: str | Path | Lake, older_than_hours: float = 1.0) -> list[str]:
    """Expire old lake snapshots and delete the Parquet files no snapshot needs, orphans of killed writers
    included (only those older than `older_than_hours`: a running ingest's files are young); a file
    warehouse is checkpointed."""
    target = parse_warehouse(warehouse)
    with open_warehouse(target, write=True) as con:
        if not isinstance(target, Lake):
            con.execute("checkpoint")
            return [f"{target}: checkpointed"]
        age = {"age": f"{older_than_hours * 3600:.0f} seconds"}
        expired = con.execute("call ducklake_expire_snapshots('lake', older_than => now() - $age::interval)", age).fetchall()
        old = con.execute("call ducklake_cleanup_old_files('lake', older_than => now() - $age::interval)", age).fetchall()
        orphans = con.execute("call ducklake_delete_orphaned_files('lake', older_than => now() - $age::interval)",
                              age).fetchall()
    return [f"{len(expired)} snapshots expired", f"{len(old)} files of expired snapshots deleted",
            f"{len(orphans)} orphaned files deleted"]
