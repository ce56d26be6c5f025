"""Load one perflog bundle into the warehouse: all of it, or nothing.

Order of work: validate the manifest (before the warehouse is touched), take the writer lock, read every
source (rejected lines kept aside), refuse the run when a file has too many rejected lines, replace the run's
rows, build the marts, commit. A failed ingest leaves the warehouse as it was.

A warehouse file gets the run in two transactions. The first writes the rows under a staged id
(connection.staged_run_id) and commits them; the second deletes the run's earlier load, gives the rows their run's
id and builds the marts. DuckDB 1.5.5 scans a table on `committed rows / 122,880 + 1` threads, so the marts of rows
not yet committed ran on one thread (docs/performance.md, "Two transactions"). Nobody sees the staged rows: the
writer holds the warehouse's lock throughout; a failure in either transaction removes them, and a process that
died between the two leaves them to the next ingest, which removes them first. A lake gets one transaction:
it has no lock to hide them (and a lake's ingest builds the run in a scratch file first).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import duckdb

from tasks.bundle.manifest import Manifest, load_manifest
from tasks.bundle.printable import say
from tasks.warehouse.clock_skew import place_by_corrected_clocks
from tasks.warehouse.connection import (
    commit_so_far,
    delete_run,
    drop_staged_runs,
    memory_limit,
    open_warehouse,
    publish_staged_run,
    refresh_marts,
    staged_run_id,
    transaction,
)
from tasks.warehouse.engines import Lake, lake_lock, parse_warehouse
from tasks.warehouse.lake import reserve_source_keys, retry_on_conflict
from tasks.warehouse.models import build_model
from tasks.warehouse.moving import OtherMartModels, copy_runs
from tasks.warehouse.reading import IngestError, SourceReport, read_all_sources
from tasks.warehouse.verdicts import Verdict, run_verdicts

__all__ = ["IngestError", "IngestReport", "SourceReport", "ingest_bundle"]  # IngestError: raised while reading


@dataclass
class IngestReport:
    """What an ingest did, for the terminal and for flows."""

    run_id: str
    warehouse: Path | Lake
    sources: list[SourceReport] = field(default_factory=list)
    requests_by_side: dict[str, int] = field(default_factory=dict)
    unmapped_requests: int = 0
    rejected_lines: int = 0
    verdicts: list[Verdict] = field(default_factory=list)
    seconds: float = 0.0


def _unset_newer_fields(manifest: Manifest) -> set[str] | None:
    """Fields added to run.yaml since runs were first stored, left out when unset: a run's stored manifest stays
    as it was before they existed (no `"hooks": []`, no `"prefect": null`, no `"percentile_method": "linear"`, the
    default the macro percentile_method reads for a manifest without it)."""
    unset = {name for name in ("hooks", "prefect") if not getattr(manifest, name)}
    return unset | ({"percentile_method"} if manifest.percentile_method == "linear" else set()) or None


def _insert_run(con: duckdb.DuckDBPyConnection, manifest: Manifest, bundle_uri: str, run_id: str) -> None:
    """The manifest's rows of runs, iterations and requirements, keyed by `run_id` (its own, or staged)."""
    con.execute(
        "insert into runs values ($run_id, $campaign, $scenario, map(), $status, $reason, $tz, $started, $ended, "
        "$ingested, $uri, $manifest, 0, 0)",
        {
            "run_id": run_id,
            "campaign": manifest.campaign,
            "scenario": manifest.scenario,
            "status": manifest.status,
            "reason": manifest.status_reason,
            "tz": manifest.timezone,
            "started": manifest.started_at,
            "ended": manifest.ended_at,
            "ingested": datetime.now(timezone.utc),
            "uri": bundle_uri,
            "manifest": manifest.model_dump_json(exclude=_unset_newer_fields(manifest)),
        },
    )
    if manifest.labels:
        con.execute(
            "update runs set labels = map($keys, $values) where run_id = $run_id",
            {"keys": list(manifest.labels), "values": list(manifest.labels.values()), "run_id": run_id},
        )
    con.executemany(
        "insert into iterations by name select $run_id as run_id, $iteration as iteration, $start as started_at, "
        "$end as ended_at, $duration as duration_s, $load as load, $warmup as warmup_s",
        [
            {
                "run_id": run_id,
                "iteration": it.index,
                "start": it.start,
                "end": it.end,
                "duration": (it.end - it.start).total_seconds() - it.warmup_s,  # measured after the warm-up
                "load": json.dumps(it.load),
                "warmup": it.warmup_s,
            }
            for it in manifest.iterations
        ],
    )
    if manifest.requirements:
        con.executemany(
            "insert into requirements by name select $run_id as run_id, $id as requirement_id, $metric as metric, "
            "$op as op, $threshold as threshold, $side as side, $min_cps as min_calls_per_s, $label as label, "
            "$label_regex as label_regex, $host as host, $role as role, $k6_metric as k6_metric, $unit as unit, "
            "$at_iteration as at_iteration, $at_load::json as at_load, $expect as expect, $slow_call_ms as slow_call_ms",
            [
                {
                    "run_id": run_id,
                    "id": req.id,
                    "metric": req.metric,
                    "op": req.op,
                    "threshold": req.threshold,
                    "side": req.side,
                    "min_cps": req.min_calls_per_s,
                    "label": req.label,
                    "label_regex": req.label_regex,
                    "host": req.host,
                    "role": req.role,
                    "k6_metric": req.k6_metric,
                    "unit": req.unit,
                    "at_iteration": req.at.iteration if req.at else None,
                    "at_load": json.dumps(req.at_load) if req.at_load else None,
                    "expect": req.expect,
                    "slow_call_ms": req.slow_call_ms,
                }
                for req in manifest.requirements
            ],
        )


def _finish_run(con: duckdb.DuckDBPyConnection, report: IngestReport) -> None:
    params = {"run_id": report.run_id}
    build_model(con, "int_run_request_totals", params)
    con.execute(
        "update runs set "
        "unmapped_requests = (select coalesce(sum(calls), 0) from int_run_request_totals where iteration is null), "
        "rejected_lines = (select count(*) from rejected_lines where run_id = $run_id) "
        "where run_id = $run_id",
        params,
    )
    con.execute(  # requests placed by overlap (docs/warehouse.md, "Placing rows in iterations")
        "update iterations set boundary_calls = (select coalesce(sum(totals.boundary_calls), 0) "
        "from int_run_request_totals as totals where totals.iteration = iterations.iteration) where run_id = $run_id",
        params,
    )
    report.requests_by_side = dict(
        con.execute("select side, sum(calls)::bigint from int_run_request_totals group by side order by side").fetchall()
    )
    report.unmapped_requests, report.rejected_lines = con.execute(
        "select unmapped_requests, rejected_lines from runs where run_id = $run_id", params
    ).fetchone()
    report.verdicts = run_verdicts(con, report.run_id)


# Below this many rows read, the clock skew and the marts run on one DuckDB thread: their operators' parallel
# set-up costs more than it saves (measured on the 20k-row echo bundle: 15-20 % less CPU and less wall time;
# on 1 M access-log rows no slower). Larger runs keep every thread.
SMALL_RUN_ROWS = 1_000_000


def _one_thread_when_small(con: duckdb.DuckDBPyConnection, sources: list[SourceReport]) -> None:
    if sum(source.rows for source in sources) < SMALL_RUN_ROWS:
        con.execute("set threads = 1")


def _out_of_memory(exc: duckdb.Error) -> bool:
    """DuckDB past its memory limit: an operator's OutOfMemoryException, or a commit that 'could not allocate
    block' (a TransactionException: the commit writes the run's blocks)."""
    return isinstance(exc, duckdb.OutOfMemoryException) or "could not allocate block" in str(exc)


def _staged_then_published(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    read: Callable[[duckdb.DuckDBPyConnection, str], None],
    publish: Callable[[duckdb.DuckDBPyConnection], None],
    progress: Callable[[str], None],
) -> None:
    """Read the run under its staged id and commit; then publish it under its own (the module's docstring). A
    failure in either removes what was staged: a large source's rows are committed while the others are read."""
    with transaction(con):
        for left in drop_staged_runs(con):
            progress(f"removed the rows of an ingest that stopped before it published them ({left!r})")
    try:
        with transaction(con):
            read(con, staged_run_id(run_id))
        with transaction(con):
            publish_staged_run(con, run_id)
            publish(con)
    except BaseException:
        try:
            with transaction(con):
                delete_run(con, staged_run_id(run_id))
        except duckdb.Error:  # a connection the first error left unusable: the next ingest removes them
            pass
        raise


def ingest_bundle(
    bundle_dir: Path,
    warehouse: Path | Lake,
    bundle_uri: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> IngestReport:
    """Load a bundle folder into the warehouse, replacing any earlier load of the same run_id."""
    progress = progress or say  # the one escape: a path from run.yaml may hold an ESC
    started = time.perf_counter()
    root = Path(bundle_dir).resolve()
    try:
        str(root).encode("utf-8")
    except UnicodeEncodeError:
        raise IngestError(f"{str(root)!r}: the bundle's path is not valid UTF-8 (a name in another encoding?): "
                          "rename it; DuckDB opens files by UTF-8 names") from None
    manifest = load_manifest(root)
    target = parse_warehouse(warehouse)
    report = IngestReport(manifest.run_id, target)

    def read(con: duckdb.DuckDBPyConnection, run_id: str, keys: list[int]) -> None:
        _insert_run(con, manifest, bundle_uri or root.as_uri(), run_id)
        if run_id == manifest.run_id:
            report.sources = read_all_sources(con, manifest, root, keys, progress)
        else:  # staged: nothing is published by a commit, so a large source's rows are committed once written
            staged = manifest.model_copy(update={"run_id": run_id})
            report.sources = read_all_sources(con, staged, root, keys, progress, commit=partial(commit_so_far, con))

    def publish(con: duckdb.DuckDBPyConnection) -> None:
        _one_thread_when_small(con, report.sources)
        place_by_corrected_clocks(con, manifest, progress)  # before the marts: skewed hosts re-placed
        progress("building marts")
        refresh_marts(con, manifest.run_id, then=lambda: _finish_run(con, report))

    def load(into: Path | Lake) -> None:
        with open_warehouse(into, write=True) as con:
            con.execute("set preserve_insertion_order = false")
            keys = reserve_source_keys(con, len(manifest.sources))
            try:
                if isinstance(into, Lake):
                    with transaction(con):
                        delete_run(con, manifest.run_id)
                        read(con, manifest.run_id, keys)
                        publish(con)
                else:
                    _staged_then_published(con, manifest.run_id, partial(read, keys=keys), publish, progress)
            except duckdb.Error as exc:  # an operator that cannot spill, no disk to spill to, or a commit short of memory
                if not _out_of_memory(exc):
                    raise
                raise IngestError(f"{str(exc).splitlines()[0]}: the ingest may use {memory_limit()} of memory "
                                  "(PERFCAMPAIGN_MEMORY_LIMIT): raise it, or free disk space beside the warehouse "
                                  "for DuckDB's temporary files") from None

    if not isinstance(target, Lake):
        load(target)
        report.seconds = time.perf_counter() - started
        return report
    # A lake answers each statement after a look at its catalog: the run is built in a scratch file (the
    # file engine's speed) and copied in in one transaction, a few statements per table.
    with tempfile.TemporaryDirectory(prefix="perfcampaign-ingest-") as scratch:
        load(Path(scratch) / "run.duckdb")
        progress(f"copying run {manifest.run_id} into the lake")
        waiting = f"another process ingests run {manifest.run_id}"
        with lake_lock(target, f"perfcampaign ingest {manifest.run_id}", waiting):  # one ingest of a run at a time
            try:
                copy_runs(Path(scratch) / "run.duckdb", target, [manifest.run_id])
            except OtherMartModels:  # sql/marts changed since the lake's marts were built: rebuild them there
                progress("the mart models changed: rebuilding every run's marts in the lake")
                retry_on_conflict(lambda: load(target), f"ingest of {manifest.run_id}")
    report.seconds = time.perf_counter() - started
    return report
