"""Reader for JMeter result files (`kind: jtl`): CSV (any column subset, `,` or tab) or XML, plain or gzip.

CSV goes through DuckDB's CSV reader (no Python per row): the header, read here, says which columns are
there and in which order; the first sample says whether `timeStamp` is epoch ms or a formatted time.
XML is streamed by `tasks.warehouse.sources.jtl_xml`. Both hand the same raw columns (timeStamp, elapsed, label,
responseCode, success, bytes) to the staging view `sql/staging/stg_jtl__samples.sql`.

Options: `delimiter` (default: sniffed from the header), `timestamp_format` (strftime form, for a formatted
timeStamp other than JMeter's `yyyy/MM/dd HH:mm:ss.SSS` or `yyyy-MM-dd HH:mm:ss.SSS`), `columns` (the
column names of a CSV written without a header line), `encoding` (utf-8, latin-1 or utf-16).
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import duckdb
import pandas as pd

from tasks.bundle.files import HEADER_CHARS, is_gzip, open_text
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources import csv_pieces, jtl_xml
from tasks.warehouse.sources.base import (
    SourceContext,
    SourceError,
    SourceResult,
    load_requests,
    loaded_rows,
    reject,
    set_load_context,
)

# JMeter's default CSV columns, in the order JMeter writes them (CSVSaveService).
DEFAULT_COLUMNS = (
    "timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType", "success",
    "failureMessage", "bytes", "sentBytes", "grpThreads", "allThreads", "URL", "Latency", "IdleTime", "Connect",
)
# Raw columns the staging view reads, with the CSV reader's type for each (timeStamp's type is sniffed).
RAW_TYPES = {
    "elapsed": "BIGINT", "label": "VARCHAR", "responseCode": "VARCHAR", "success": "BOOLEAN", "bytes": "BIGINT"
}
RAW_COLUMNS = ("timeStamp",) + tuple(RAW_TYPES)
DELIMITERS = (",", "\t", ";", "|")
# Formatted timeStamps JMeter users set most (jmeter.save.saveservice.timestamp_format), in strftime form.
TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%g", "%Y-%m-%d %H:%M:%S.%g", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S")
ENCODINGS = ("utf-8", "latin-1", "utf-16")


def read(ctx: SourceContext) -> SourceResult:
    """Load one JTL (CSV or XML) into request_facts; unreadable records go to rejected_lines."""
    if _looks_like_xml(ctx.file):
        return _read_xml(ctx)
    return _read_csv(ctx)


def _looks_like_xml(path: Path) -> bool:
    with open_text(path) as handle:
        return handle.read(256).lstrip("\ufeff \t\r\n").startswith("<")


def _load_raw(ctx: SourceContext, raw: duckdb.DuckDBPyRelation, resolution_us: int | None = None) -> int:
    """Stage the raw_jtl relation in the manifest's zone and append it to request_facts; rows loaded so far.
    `resolution_us`: the clock's, when not the kind's (ms)."""
    raw.create_view("raw_jtl", replace=True)
    set_load_context(ctx, resolution_us, zone=ctx.manifest.timezone)
    build_model(ctx.con, "stg_jtl__samples")
    rows = load_requests(ctx, ctx.con.view("stg_jtl__samples"))
    drop_model(ctx.con, "stg_jtl__samples")
    ctx.con.execute("drop view raw_jtl")
    return rows


# --- XML ---------------------------------------------------------------------------------------------------


def _read_xml(ctx: SourceContext) -> SourceResult:
    loaded = 0

    def load_batch(frame: pd.DataFrame) -> None:
        nonlocal loaded
        loaded = _load_raw(ctx, ctx.con.from_df(frame))

    outcome = jtl_xml.parse(ctx.file, load_batch)
    if outcome.root not in (None, "testResults"):
        raise SourceError(f"{ctx.field}: XML whose root is <{outcome.root}>, not a JMeter <testResults> file")
    reject(ctx, outcome.rejects)
    path = ctx.source.path
    notes = []
    if outcome.subsamples:
        notes.append(f"{path}: {outcome.subsamples} sub-samples (embedded resources, transaction children) "
                     "not counted as requests: their top-level sample holds their time")
    if outcome.not_samples:
        notes.append(f"{path}: {outcome.not_samples} top-level elements without sample times skipped")
    if outcome.unclosed_root:
        notes.append(f"{path}: ends without </testResults> (JMeter did not close it); every sample is complete")
    return SourceResult(rows=loaded, rejected=len(outcome.rejects), notes=tuple(notes))


# --- CSV ---------------------------------------------------------------------------------------------------


def _read_csv(ctx: SourceContext) -> SourceResult:
    encoding = ctx.option("encoding", "utf-8")
    if encoding not in ENCODINGS:
        raise SourceError(f"{ctx.field}.encoding: {encoding!r}: expected one of {', '.join(ENCODINGS)}")
    try:
        delimiter, first, second = _first_records(ctx.file, encoding, ctx.option("delimiter"))
    except csv.Error as exc:  # a record past the csv module's field limit, e.g. a 100 MB line
        raise SourceError(f"{ctx.field}: the first records cannot be read as JTL CSV: {exc}") from None
    if first is None:
        return SourceResult(notes=(f"{ctx.source.path}: empty file",))
    names, has_header, notes = _layout(ctx, first)
    sample = second if has_header else first
    position = names.index("timeStamp")
    time_type, time_format = _time_type(ctx, sample[position] if sample and len(sample) > position else None)
    columns = _column_types(names, time_type)
    csv_options = dict(
        columns=columns,
        header=has_header,
        delimiter=delimiter,
        quotechar='"',
        escapechar='"',
        auto_detect=False,
        strict_mode=True,
        force_not_null=["timeStamp", "elapsed"],  # an empty one is a broken record: rejected, not NULL
        encoding=encoding,
    )
    if time_format:
        csv_options["timestamp_format"] = time_format

    def read_file(path: Path, store: bool) -> duckdb.DuckDBPyRelation:
        raw = ctx.con.read_csv(str(path), compression="gzip" if is_gzip(path) else "none", **csv_options,
                               **csv_pieces.error_options(store))
        return raw.select(*_raw_projection(columns))

    # a line cut inside quotes is followed by whole records; a multi-line message by its next part
    separators = len(names) - 1

    def starts_record(line: bytes) -> bool:
        return line.count(delimiter.encode()) >= separators

    quoting = None if encoding == "utf-16" else (b'"', b'"')  # UTF-16 bytes cannot be scanned for quotes
    # a formatted timeStamp without a fraction of a second stamps whole seconds
    resolution_us = 1_000_000 if time_format and not any(part in time_format for part in ("%g", "%f", "%n")) else None
    rejected = csv_pieces.load_csv(ctx, read_file, lambda raw: _load_raw(ctx, raw, resolution_us), has_header,
                                   starts_record, quoting)
    return SourceResult(rows=loaded_rows(ctx), rejected=rejected, notes=tuple(notes))


def _first_records(path: Path, encoding: str, delimiter: str | None) -> tuple[str, list[str] | None, list[str] | None]:
    """The delimiter and the first two records as the csv module reads them (quoted newlines included)."""
    opener = gzip.open if is_gzip(path) else open
    with opener(path, "rt", encoding=encoding, errors="replace", newline="") as handle:
        head = handle.readline(HEADER_CHARS + 1)
        if len(head) > HEADER_CHARS:
            raise csv.Error(f"line 1 is longer than {HEADER_CHARS:,} characters")
        if not head.strip():
            return delimiter or ",", None, None
        delimiter = delimiter or _sniff_delimiter(head)
        handle.seek(0)
        reader = csv.reader(handle, delimiter=delimiter, quotechar='"', doublequote=True)
        first = next(reader, None)
        second = next(reader, None)
    first[0] = first[0].lstrip("\ufeff")
    return delimiter, first, second


def _sniff_delimiter(head: str) -> str:
    """The delimiter that makes a JMeter header out of the first line (comma when none does)."""
    for delimiter in DELIMITERS:
        fields = {field.strip('"').lower() for field in head.rstrip("\r\n").split(delimiter)}
        if {"timestamp", "elapsed"} <= fields:
            return delimiter
    return ","


def _layout(ctx: SourceContext, fields: list[str]) -> tuple[list[str], bool, list[str]]:
    """Column names in file order, whether line 1 is a header, and notes for the report."""
    canonical = {name.lower(): name for name in RAW_COLUMNS}
    header = [canonical.get(field.strip().lower(), field) for field in fields]
    notes = []
    if "timeStamp" in header:
        names, has_header = header, True
    elif ctx.option("columns"):
        names, has_header = [canonical.get(str(c).lower(), str(c)) for c in ctx.option("columns")], False
    elif len(fields) == len(DEFAULT_COLUMNS) and fields[0].strip().isdigit():
        names, has_header = list(DEFAULT_COLUMNS), False
        notes.append(f"{ctx.source.path}: no header line; read with JMeter's default columns")
    else:
        raise SourceError(
            f"{ctx.field}: line 1 is not a JMeter CSV header (no timeStamp column) and the file does not have "
            f"JMeter's {len(DEFAULT_COLUMNS)} default columns; give the column names as `columns: [...]`"
        )
    for required in ("timeStamp", "elapsed"):
        if required not in names:
            raise SourceError(f"{ctx.field}: the JTL has no {required} column (columns: {', '.join(names)})")
    missing = [name for name in RAW_COLUMNS if name not in names]
    if missing:
        notes.append(f"{ctx.source.path}: no {', '.join(missing)} column; loaded as NULL")
    return _unique(names), has_header, notes


def _unique(names: list[str]) -> list[str]:
    """Column names made unique (sample_variables may repeat a name): later copies get _2, _3..."""
    seen: dict[str, int] = {}
    result = []
    for name in names:
        key = name.lower()
        seen[key] = seen.get(key, 0) + 1
        result.append(name if seen[key] == 1 else f"{name}_{seen[key]}")
    return result


def _time_type(ctx: SourceContext, value: str | None) -> tuple[str, str | None]:
    """BIGINT for epoch ms, else TIMESTAMP with the first format that parses the first sample."""
    given = ctx.option("timestamp_format")
    if given and ("%z" in given or "%Z" in given):
        # DuckDB 1.5.5's CSV reader gives NULL, silently, for TIMESTAMPTZ with a timestamp format.
        raise SourceError(
            f"{ctx.field}.timestamp_format: zone fields (%z, %Z) are not supported; JMeter writes local time"
        )
    if value is None or (given is None and value.strip().isdigit()):
        return "BIGINT", None
    for fmt in ([given] if given else []) + list(TIME_FORMATS):
        parsed = ctx.con.execute("select try_strptime($value, $fmt)", {"value": value.strip(), "fmt": fmt})
        if parsed.fetchone()[0] is not None:
            return "TIMESTAMP", fmt
    if given:
        raise SourceError(f"{ctx.field}.timestamp_format: {given!r} does not parse the first timeStamp {value!r}")
    raise SourceError(
        f"{ctx.field}: timeStamp {value!r} of the first sample is neither epoch ms nor one of "
        f"{', '.join(TIME_FORMATS)}; give the source its timestamp_format in strftime form (e.g. '%d.%m.%Y %H:%M:%S')"
    )


def _column_types(names: list[str], time_type: str) -> dict[str, str]:
    types = dict(RAW_TYPES, timeStamp=time_type)
    return {name: types.get(name, "VARCHAR") for name in names}


def _raw_projection(columns: dict[str, str]) -> list[duckdb.Expression]:
    """The raw_jtl columns in a fixed order; one the file lacks is a typed NULL."""
    types = dict(RAW_TYPES, timeStamp="BIGINT")
    return [
        duckdb.ColumnExpression(name) if name in columns
        else duckdb.ConstantExpression(None).cast(types[name]).alias(name)
        for name in RAW_COLUMNS
    ]
