"""What every source reader shares: its context, its result, and the two ways rows reach the warehouse.

A request-level reader turns its raw file into a relation with the columns of `REQUEST_COLUMNS`
(usually by building its staging view from `sql/staging/`), then `load_requests` places every row in its
iteration and appends it to `request_facts` (`sql/base/request_facts.sql`).
Lines that cannot be read go to `rejected_lines` with their line number: nothing is silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from tasks.bundle.manifest import Manifest, Source
from tasks.warehouse.models import build_model

REQUEST_COLUMNS = ("label", "method", "started_at", "elapsed_ms", "status_code", "is_error", "bytes")
EXCERPT_CHARS = 200


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


def set_load_context(ctx: SourceContext, **settings: Any) -> None:
    """Publish this source's values to SQL as the one-row temp table `load_context`.

    Staging views and the `request_facts` model read their values from it (run_id, source_key,
    pinned_iteration and any reader `settings`, e.g. `duration_to_ms`). Setting names come from reader
    code, never from input; values are bound parameters.
    """
    extra = "".join(f", ${name} as {name}" for name in settings)
    ctx.con.execute(
        "create or replace temp table load_context as select $run_id::varchar as run_id, "
        f"$source_key::integer as source_key, $pinned_iteration::integer as pinned_iteration{extra}",
        {"run_id": ctx.manifest.run_id, "source_key": ctx.source_key, "pinned_iteration": ctx.source.iteration, **settings},
    )


def load_requests(ctx: SourceContext, staged: duckdb.DuckDBPyRelation) -> int:
    """Place staged request rows in their iterations and append them to `request_facts`.

    Call `set_load_context` first. Speed: nothing on this path may carry prepared parameters. A
    relation made by `con.sql(..., params=...)` is executed eagerly and held in memory, and a view over
    one makes DuckDB write the whole insert to its WAL at commit (7 s per million rows, duckdb 1.5.5)
    instead of writing row groups straight to the file. So readers build raw relations with the Python
    API (`con.read_csv(path, ...)`), staging models are plain views reading `load_context`, and the
    `request_facts` model is built without parameters over the view `stg_requests`.
    """
    staged.create_view("stg_requests", replace=True)
    build_model(ctx.con, "request_facts")
    ctx.con.execute("drop view stg_requests")
    return loaded_rows(ctx)


def loaded_rows(ctx: SourceContext) -> int:
    """Requests of this source in request_facts so far."""
    return ctx.con.execute(
        "select count(*) from request_facts where source_key = $k", {"k": ctx.source_key}
    ).fetchone()[0]


def reject(ctx: SourceContext, rows: list[tuple[int, str, str]]) -> None:
    """Keep unreadable lines aside as (line_no, reason, raw text)."""
    if not rows:
        return
    ctx.con.executemany(
        "insert into rejected_lines values ($run_id, $host, $path, $line_no, $reason, $excerpt)",
        [
            {
                "run_id": ctx.manifest.run_id,
                "host": ctx.source.host,
                "path": ctx.source.path,
                "line_no": line_no,
                "reason": reason,
                "excerpt": excerpt[:EXCERPT_CHARS],
            }
            for line_no, reason, excerpt in rows
        ],
    )
