"""What every source reader shares: its context, its result, and the two ways rows reach the warehouse.

A request-level reader turns its raw file into a relation with the columns of `REQUEST_COLUMNS`
(usually by building its staging view from `sql/staging/`), then `load_requests` places every row in its
iteration and appends it to `request_facts` (`sql/base/request_facts.sql`).
Lines that cannot be read go to `rejected_lines` with their line number: nothing is silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from tasks.bundle.files import Fingerprint
from tasks.bundle.kinds import HOST_SAMPLE_KINDS, KINDS
from tasks.bundle.manifest import Manifest, Source
from tasks.bundle.thresholds import THRESHOLDS
from tasks.warehouse.models import build_model, model_sql

REQUEST_COLUMNS = ("label", "method", "started_at", "elapsed_ms", "status_code", "is_error", "bytes")
EXCERPT_CHARS = 200
REJECTS_KEPT = 10_000  # rejected lines kept per source with their reason; beyond, only counted


class SourceError(ValueError):
    """A raw file that cannot be read; the message names the file (and line or field)."""


@dataclass
class SourceContext:
    """Everything a reader needs about one source of one bundle."""

    con: duckdb.DuckDBPyConnection
    manifest: Manifest
    source: Source
    number: int  # position in manifest.sources, for error messages
    source_key: int
    file: Path  # absolute path of the raw file
    fingerprint: Callable[[], Fingerprint]  # its sha256, unpacked size and lines (a pass in a thread)
    # What the sources of one ingest share on its connection (the shape of `load_context`): one dict per ingest
    shared: dict[str, Any] = field(default_factory=dict)

    @property
    def field(self) -> str:
        """How error messages name this source: `sources.3 (app1/access.log)`."""
        return f"sources.{self.number} ({self.source.path})"

    def option(self, name: str, default: Any = None) -> Any:
        """A kind-specific option of the source."""
        return self.source.options.get(name, default)


@dataclass
class SourceResult:
    """What a reader loaded: rows kept, lines rejected (their share decides whether the ingest fails)."""

    rows: int = 0
    rejected: int = 0
    notes: tuple[str, ...] = ()
    # Work that needs every source of the bundle loaded (e.g. checking a summary against the raw rows):
    # the ingest calls it once after the last source, in manifest order; it returns more notes.
    after_all: Callable[[], tuple[str, ...]] | None = None

    @property
    def rejected_pct(self) -> float:
        total = self.rows + self.rejected
        return 100.0 * self.rejected / total if total else 0.0


def set_load_context(ctx: SourceContext, resolution_us: int | None = None, **settings: Any) -> None:
    """Publish this source's values to SQL as the one-row temp table `load_context`.

    Staging views and the placing models read their values from it: its row of `sources` (run_id,
    source_key, pinned_iteration, host, path, resolution_us: the kind's, unless the reader knows its file's
    clock better) and any reader `settings`, e.g. `duration_to_ms`; a batch of sources read together
    publishes its first, whose values the batch's key makes everyone's (sources/access_log_batch.py). Setting
    names come from reader code, never from input; values are bound parameters. The table is made once per
    shape and its row replaced after: a table made and dropped inside the ingest's transaction is kept until
    the commit (76 KB each, 0.76 GB for a bundle of 10,000 sources).
    """
    resolution = KINDS[ctx.source.kind].resolution_us if resolution_us is None else resolution_us
    ctx.con.execute("update sources set resolution_us = $r where source_key = $k",
                    {"r": resolution, "k": ctx.source_key})
    publish_load_context(ctx.con, ctx.source_key, ctx.shared, **settings)


def publish_load_context(con: duckdb.DuckDBPyConnection, source_key: int, shared: dict | None = None, /,
                         **settings: Any) -> None:
    """`load_context` from the source's row of `sources` plus `settings` (see set_load_context)."""
    extra = "".join(f", ${name} as {name}" for name in settings)
    select = ("select run_id, source_key, pinned_iteration, host, path, "
              f"resolution_us{extra} from sources where source_key = $source_key")
    values = {"source_key": source_key, **settings}
    shape = tuple((name, type(value).__name__, isinstance(value, int) and abs(value) >= 1 << 31)
                  for name, value in settings.items())  # what DuckDB types the columns by
    if shared is not None and shared.get("load_context") == shape:
        con.execute("delete from load_context")
        con.execute(f"insert into load_context {select}", values)
        return
    con.execute(f"create or replace temp table load_context as {select}", values)
    if shared is not None:
        shared["load_context"] = shape


def load_requests(ctx: SourceContext, staged: duckdb.DuckDBPyRelation) -> int:
    """Place staged request rows in their iterations and append them to `request_facts`.

    Call `set_load_context` first. Speed: nothing on this path may carry prepared parameters. A
    relation made by `con.sql(..., params=...)` is executed eagerly and held in memory, and a view over
    one makes DuckDB write the whole insert to its WAL at commit (7 s per million rows, duckdb 1.5.5)
    instead of writing row groups straight to the file. So readers build raw relations with the Python
    API (`con.read_csv(path, ...)`), staging models are plain views reading `load_context`, and the
    `request_facts` model is built without parameters over the view `stg_requests`.
    """
    append_requests(ctx.con, staged.project("*, (select source_key from load_context) as source_key"))
    return loaded_rows(ctx)


def append_requests(con: duckdb.DuckDBPyConnection, staged: duckdb.DuckDBPyRelation) -> None:
    """Append staged rows that carry their `source_key` to `request_facts` (one source's, or a batch's)."""
    staged.create_view("stg_requests", replace=True)
    build_model(con, "request_facts")
    con.execute("drop view stg_requests")


def loaded_rows(ctx: SourceContext) -> int:
    """Requests of this source in request_facts so far."""
    return ctx.con.execute(
        "select count(*) from request_facts where source_key = $k", {"k": ctx.source_key}
    ).fetchone()[0]


class Rejects:
    """Rejected lines as (line_no, reason, text): every one counted, the first `keep` kept with a short excerpt.

    A file of junk must not cost memory per line: past `keep` only the count grows (len() is the count).
    """

    def __init__(self, keep: int = REJECTS_KEPT):
        self.keep, self.count, self.kept = keep, 0, []

    def append(self, item: tuple[int | None, str, str]) -> None:
        self.count += 1
        if len(self.kept) < self.keep:
            line_no, reason, text = item
            self.kept.append((line_no, reason, text[:EXCERPT_CHARS]))

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        return iter(self.kept)


def reject(ctx: SourceContext, rows) -> None:
    """Keep unreadable lines aside as (line_no, reason, raw text): one bulk insert, at most REJECTS_KEPT."""
    kept = list(rows)[:REJECTS_KEPT]
    if not kept:
        return
    line_nos, reasons, excerpts = (list(column) for column in zip(*kept))
    ctx.con.execute(
        "insert into rejected_lines select $run_id, $host, $path, unnest($line_nos::bigint[]), "
        "unnest($reasons::varchar[]), unnest($excerpts::varchar[])",
        {"run_id": ctx.manifest.run_id, "host": ctx.source.host, "path": ctx.source.path, "line_nos": line_nos,
         "reasons": reasons, "excerpts": [text[:EXCERPT_CHARS] for text in excerpts]},
    )


def reject_bad_values(ctx: SourceContext) -> int:
    """Move this source's rows with impossible values to rejected_lines; return how many.

    Requests: sql/rejects/request_values.sql (durations, statuses, times); host samples:
    sql/rejects/sample_times.sql (times). Both judge times against the run widened by
    thresholds.reject_outside_run_h.
    """
    if ctx.source.side is not None:
        table, query = "request_facts", "rejects/request_values"
    elif ctx.source.kind in HOST_SAMPLE_KINDS:
        table, query = "host_sample_facts", "rejects/sample_times"
    else:
        return 0
    params = _bad_value_params(ctx.manifest, [ctx.source_key])
    bad = ctx.con.execute(f"select count(*) from ({model_sql(query)})", params).fetchone()[0]
    if bad:  # rare: a table made in the ingest's transaction is kept until the commit (100 KB a source)
        ctx.con.execute(f"create or replace temp table bad_rows as {model_sql(query)}", params)
        ctx.con.execute(f"delete from {table} where rowid in (select row_id from bad_rows)")  # table: fixed above
        ctx.con.execute(
            "insert into rejected_lines select $run_id, $host, $path, line_no, reason, excerpt from bad_rows "
            "order by row_id limit $keep",
            {"run_id": ctx.manifest.run_id, "host": ctx.source.host, "path": ctx.source.path, "keep": REJECTS_KEPT})
        ctx.con.execute("drop table bad_rows")
    return bad


def sources_with_bad_requests(con: duckdb.DuckDBPyConnection, manifest: Manifest, keys: list[int]) -> set[int]:
    """Which of the request sources `keys` have rows with impossible values (see reject_bad_values)."""
    query = model_sql("rejects/request_values")
    found = con.execute(f"select distinct source_key from request_facts where rowid in (select row_id from ({query}))",
                        _bad_value_params(manifest, keys)).fetchall()
    return {key for key, in found}


def _bad_value_params(manifest: Manifest, keys: list[int]) -> dict[str, Any]:
    margin_h = manifest.thresholds.get("reject_outside_run_h", THRESHOLDS["reject_outside_run_h"])
    return {"run_id": manifest.run_id, "source_keys": keys, "margin_us": round(margin_h * 3600e6)}
