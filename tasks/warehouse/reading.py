"""Read every source of a bundle into the warehouse, inside the ingest's transaction (tasks/warehouse/ingest.py).

Each source gets its row of `sources`, its rows, its rejected lines (judged against its max_rejected_pct)
and its fingerprint. Small sources of a kind read many files a statement go in batches
(tasks/warehouse/source_batches.py); every other source, and a batch's file that was not read whole and
clean, is read alone by its kind's reader.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import duckdb

from tasks.bundle.files import CompressedFileError, Fingerprint, fingerprint
from tasks.bundle.manifest import Manifest
from tasks.warehouse.source_batches import SMALL_SOURCE_BYTES, insert_sources, plan
from tasks.warehouse.sources import FINGERPRINT_MARKERS, read_batch, read_source
from tasks.warehouse.sources.base import SourceContext, SourceError, SourceResult, reject_bad_values


class IngestError(RuntimeError):
    """The bundle could not be loaded; the warehouse is unchanged."""


@dataclass
class SourceReport:
    path: str
    kind: str
    host: str
    rows: int
    rejected: int
    seconds: float
    notes: tuple[str, ...] = ()


# A source that wrote at least this many rows (two of DuckDB's row groups) is committed before its rows are judged,
# when the ingest stages its run (ingest.py): DuckDB scans a table on `committed rows / 122,880 + 1` threads.
COMMITTED_ROWS = 2 * 122_880


def read_all_sources(
    con: duckdb.DuckDBPyConnection, manifest: Manifest, root: Path, keys: list[int], progress: Callable[[str], None],
    commit: Callable[[], None] | None = None,
) -> list[SourceReport]:
    """Read the manifest's sources (their rows of `sources` keyed by `keys`); a report per source, in order.
    `commit`, if given, commits what is read so far (a staged run's rows) after a large source."""
    # Fingerprints are taken in a thread while DuckDB parses (hashlib and zlib release the GIL): 0.6 s per
    # GB that no longer adds to the ingest, and a gzip file is checked (bomb, truncated) by the same pass.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fingerprint") as hasher:
        prints = {source.path: hasher.submit(fingerprint, root / source.path, con.interrupt,
                                             FINGERPRINT_MARKERS.get(source.kind))
                  for source in manifest.sources}
        shared: dict = {}  # what the readers keep on the connection between sources (SourceContext.shared)
        contexts = [
            SourceContext(con, manifest, source, number, keys[number], root / source.path,
                          partial(_checked, prints[source.path], f"sources.{number} ({source.path})"), shared)
            for number, source in enumerate(manifest.sources)
        ]
        try:
            reports = _Reader(contexts, progress, commit).read()
        except duckdb.InterruptException:  # a gzip check stopped whatever statement ran: say why
            _checked_all(contexts)
            raise
        con.execute(
            "update sources set sha256 = m.sha from (select unnest($paths) as path, unnest($shas) as sha) as m "
            "where sources.run_id = $run_id and sources.path = m.path",
            {"run_id": manifest.run_id, "paths": list(prints),
             "shas": [done.result().sha256 for done in prints.values()]},
        )
    return reports


class _Reader:
    """One ingest's reading: batches, then the sources read alone, then the work that needs them all."""

    def __init__(self, contexts: list[SourceContext], progress: Callable[[str], None],
                 commit: Callable[[], None] | None):
        self.contexts, self.progress, self.commit = contexts, progress, commit
        self.sizes = [ctx.file.stat().st_size for ctx in contexts]
        self.pending: list[tuple[SourceReport, Callable[[], tuple[str, ...]]]] = []

    def read(self) -> list[SourceReport]:
        if not self.contexts:
            return []
        con = self.contexts[0].con
        threads = con.execute("select current_setting('threads')").fetchone()[0]
        reports: dict[int, SourceReport] = {}
        for batch in plan(self.contexts, self.sizes):
            insert_sources(con, batch, self.sizes)
            if len(batch) > 1:
                reports.update(self._batch(batch))
            for ctx in batch:
                if ctx.number not in reports:
                    reports[ctx.number] = self._alone(ctx, threads)
        con.execute(f"set threads = {threads}")
        for report, after_all in self.pending:  # work that needs every source loaded, e.g. k6 summary checks
            self.progress(f"checking {report.path}")
            notes = after_all()
            report.notes += notes
            for note in notes:
                self.progress(f"  note: {note}")
        return [reports[ctx.number] for ctx in self.contexts]

    def _batch(self, batch: list[SourceContext]) -> dict[int, SourceReport]:
        """Read a batch's files together; reports of the sources done (the others are read alone after)."""
        first, con = batch[0], batch[0].con
        self.progress(f"reading {len(batch)} {first.source.kind} sources together: {first.source.path} … "
                      f"{batch[-1].source.path} ({sum(self.sizes[ctx.number] for ctx in batch) / 1e6:.1f} MB)")
        started = time.perf_counter()
        con.execute("set threads = 1")  # small files: see _alone
        try:
            loaded = read_batch(batch)
        except duckdb.OutOfMemoryException:
            raise  # not the files' fault: ingest_bundle names the limit
        except (duckdb.Error, UnicodeError, OSError, CompressedFileError) as exc:
            named = [ctx for ctx in batch if str(ctx.file) in str(exc)] or batch  # DuckDB names the file
            raise self._error(named[0], exc) from exc
        for ctx in batch:
            ctx.fingerprint()  # a file refused by the fingerprint pass says so
        con.execute(
            "update sources set rows_loaded = m.rows from (select unnest($keys) as source_key, unnest($rows) as rows) "
            "as m where sources.source_key = m.source_key",
            {"keys": list(loaded), "rows": list(loaded.values())},
        )
        seconds = time.perf_counter() - started
        alone = f"; {len(batch) - len(loaded):,} to read alone" if len(loaded) < len(batch) else ""
        self.progress(f"  {sum(loaded.values()):,} rows of {len(loaded):,} sources, 0 rejected, {seconds:.2f} s{alone}")
        share = seconds / len(batch)  # each source's part of the batch's time
        return {ctx.number: SourceReport(ctx.source.path, ctx.source.kind, ctx.source.host, loaded[ctx.source_key],
                                         0, share) for ctx in batch if ctx.source_key in loaded}

    def _alone(self, ctx: SourceContext, threads: int) -> SourceReport:
        """Read one source by its kind's reader, judge its rejected lines, write its counts."""
        con, source, size = ctx.con, ctx.source, self.sizes[ctx.number]
        self.progress(f"reading {source.path} ({source.kind}, {size / 1e6:.1f} MB)")
        started = time.perf_counter()
        # A parallel insert adds a row group per statement to the transaction (150-300 KB, kept until the
        # commit: 3 GB for 10,000 one-line sources); a small file is read as fast on one thread, which appends
        # its rows to the transaction's one row group.
        con.execute(f"set threads = {1 if size < SMALL_SOURCE_BYTES else threads}")
        try:
            result: SourceResult = read_source(ctx)
        except duckdb.OutOfMemoryException:
            raise  # not the file's fault: ingest_bundle names the limit
        except (duckdb.Error, UnicodeError, OSError, CompressedFileError) as exc:
            raise self._error(ctx, exc) from exc
        printed = ctx.fingerprint()  # a truncated gzip file a reader took for a shorter one
        if self.commit is not None and result.rows >= COMMITTED_ROWS:
            self.commit()  # the judging scan below then runs on every core
        bad = reject_bad_values(ctx)  # impossible values become rejected lines, whatever the reader
        result.rows, result.rejected = result.rows - bad, result.rejected + bad
        seconds = time.perf_counter() - started
        cut = _cut_last_line_rejected(con, ctx.manifest.run_id, source.path, printed)
        if cut:
            result.notes += (f"{source.path}: its last line (line {printed.lines:,}) ends without a newline, cut while "
                             "it was written: set aside, not counted against max_rejected_pct",)
        judged = replace(result, rejected=result.rejected - cut)  # the share the limit is held against
        if judged.rejected_pct > source.max_rejected_pct:
            raise IngestError(
                f"{source.path}: {judged.rejected} of {judged.rows + judged.rejected} lines "
                f"({judged.rejected_pct:.2f} %{', its cut last line not counted' if cut else ''}) could not be read, "
                f"more than the {source.max_rejected_pct:g} % "
                f"allowed (set max_rejected_pct on {ctx.field} to accept it); first reasons:\n"
                + _first_rejects(con, ctx.manifest.run_id, source.path)
            )
        if result.rows == result.rejected == 0 and not result.notes:
            result.notes = (f"{source.path}: nothing loaded: the file has no {source.kind} lines (empty?)",)
        con.execute(
            "update sources set rows_loaded = $rows, rows_rejected = $rejected where source_key = $key",
            {"rows": result.rows, "rejected": result.rejected, "key": ctx.source_key},
        )
        self.progress(f"  {result.rows:,} rows, {result.rejected:,} rejected, {seconds:.2f} s")
        for note in result.notes:
            self.progress(f"  note: {note}")
        report = SourceReport(source.path, source.kind, source.host, result.rows, result.rejected, seconds,
                              result.notes)
        if result.after_all is not None:
            self.pending.append((report, result.after_all))
        return report

    def _error(self, ctx: SourceContext, exc: BaseException) -> SourceError:
        """A one-line error naming the source; a gzip file refused by the fingerprint pass says so first
        (its check interrupts whatever DuckDB reads at the time)."""
        _checked_all(self.contexts)
        # DuckDB's first line says what went wrong; the rest lists reader options the user never set
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return SourceError(f"{ctx.field}: cannot read it as {ctx.source.kind} (is it one?): {reason}")


def _checked(done: Future[Fingerprint], field: str) -> Fingerprint:
    """A source's fingerprint, or its gzip check's error naming the file (`field`)."""
    try:
        return done.result()
    except CompressedFileError as exc:
        raise SourceError(f"{field}: {exc}") from None


def _checked_all(contexts: list[SourceContext]) -> None:
    """Raise the first gzip error of any source: its check interrupts whatever DuckDB reads at the time."""
    for ctx in contexts:
        ctx.fingerprint()


def _cut_last_line_rejected(con: duckdb.DuckDBPyConnection, run_id: str, path: str, printed: Fingerprint) -> int:
    """1 when the file's last line has no newline and was rejected: a writer stopped mid-line (a sampler killed
    at the run's end, a copy taken while it wrote) left it cut. It is kept aside with the other rejected lines,
    but a cut line of a short file is no sign of a wrong format: a pidstat log of 88 samples, its last cut by the
    sampler's stop, was 1.14 % rejected, over max_rejected_pct's 1 %, and failed a run's ingest."""
    if not printed.cut:
        return 0
    found = con.execute(
        "select count(*) from rejected_lines where run_id = $run_id and path = $path and line_no = $line",
        {"run_id": run_id, "path": path, "line": printed.lines}).fetchone()[0]
    return int(found > 0)


def _first_rejects(con: duckdb.DuckDBPyConnection, run_id: str, path: str) -> str:
    rows = con.execute(
        "select line_no, reason from rejected_lines where run_id = $run_id and path = $path order by line_no limit 5",
        {"run_id": run_id, "path": path},
    ).fetchall()
    return "\n".join(f"  line {line_no}: {reason}" for line_no, reason in rows)
