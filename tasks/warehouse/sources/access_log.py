"""Reader for server access logs (`kind: access_log`): the server's own pattern, read as delimited text."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import duckdb

from tasks.bundle.files import is_gzip
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources import csv_pieces
from tasks.warehouse.sources.access_log_pattern import (
    CLF_TIME_FORMAT,
    DURATION_SCALE_TO_MS,
    Layout,
    PatternError,
    compile_pattern,
)
from tasks.warehouse.sources.access_log_regex import (
    PRESET_REGEXES,
    read_raw_frame,
    regex_for,
)
from tasks.warehouse.sources.base import (
    SourceContext,
    SourceError,
    SourceResult,
    append_requests,
    loaded_rows,
    set_load_context,
)

# Canonical raw columns the staging macro reads, with the type of each when the pattern lacks it.
RAW_COLUMNS = {
    "ts_written": "TIMESTAMP",
    "zone_text": "VARCHAR",
    "request": "VARCHAR",
    "method": "VARCHAR",
    "url": "VARCHAR",
    "status": "INTEGER",
    "bytes": "BIGINT",
    "duration": "DOUBLE",
}
EPOCH_TO_US = {"s": 1_000_000, "ms": 1_000, "us": 1}


def _raw_expressions(layout: Layout) -> list[str]:
    """Projection from the reader's c0..cN columns to the canonical raw columns (fixed identifiers only)."""
    fields = layout.fields
    expressions = []
    for name, duckdb_type in RAW_COLUMNS.items():
        if name == "ts_written" and "ts_epoch" in fields:
            expr = f"make_timestamp({fields['ts_epoch']} * {EPOCH_TO_US[layout.epoch_unit]})"
        elif name == "ts_written" and "ts_epoch_s" in fields:
            expr = f"make_timestamp(round({fields['ts_epoch_s']} * 1000000)::bigint)"
        elif name == "zone_text" and "zone_text" not in fields:
            expr = "'+0000'"  # epoch times are UTC
        elif name == "bytes" and layout.dash_bytes_are_zero:
            expr = f"coalesce({fields['bytes']}, 0)"  # CLF's '-' (read as NULL) is a response without a body
        else:
            expr = fields.get(name, f"null::{duckdb_type}")
        expressions.append(f"{expr} as {name}")
    return expressions


def _duration_to_ms(ctx: SourceContext, layout: Layout) -> float:
    unit = ctx.option("duration_unit") or layout.duration_unit
    if "duration" in layout.fields and unit is None:
        raise SourceError(f"{ctx.field}: duration_unit is required for %D (ms for Tomcat <= 9, us for Tomcat 10+/Jetty/Apache)")
    if unit is not None and unit not in DURATION_SCALE_TO_MS:
        raise SourceError(f"{ctx.field}: duration_unit {unit!r}: expected one of ms, us, s")
    return DURATION_SCALE_TO_MS.get(unit, 1.0)


def resolution_us(layout: Layout) -> int | None:
    """How finely the pattern's time item stamps: an epoch number's unit (nginx `$msec`: ms), else the
    kind's whole second (`%t`, `$time_local`, and the regex path's times)."""
    if "ts_epoch" in layout.fields:
        return EPOCH_TO_US[layout.epoch_unit]
    return 1_000 if "ts_epoch_s" in layout.fields else None


def read_delimited(con: duckdb.DuckDBPyConnection, layout: Layout, paths: list[Path], store: bool,
                   filename: bool = False) -> duckdb.DuckDBPyRelation:
    """The delimited path: DuckDB's CSV reader with a layout compiled from the server's pattern, over one file
    or several of the same compression (`store`: keep refused lines in reject_errors, csv_pieces.error_options;
    `filename`: each row says which file it came from)."""
    raw = con.read_csv(
        [str(path) for path in paths],
        sep=layout.delimiter,
        quotechar='"',
        escapechar="\\",
        header=False,
        na_values="-",
        auto_detect=False,
        columns=layout.columns,
        timestamp_format=CLF_TIME_FORMAT,
        compression="gzip" if is_gzip(paths[0]) else "none",
        strict_mode=True,
        filename=filename,
        **csv_pieces.error_options(store),
    )
    return raw.project(", ".join(_raw_expressions(layout) + (["filename"] if filename else [])))


def layout_of(ctx: SourceContext) -> Layout:
    """The layout compiled from the source's `format` or `preset`; an error names the source."""
    try:
        return compile_pattern(ctx.option("format") or ctx.option("preset"))
    except PatternError as exc:
        raise SourceError(f"{ctx.field}.format: {exc}") from None


def _raw_from_regex(ctx: SourceContext) -> tuple[Layout, duckdb.DuckDBPyRelation, int]:
    """The fallback path: a regex per line in Python (see access_log_regex); returns rejected lines too."""
    compiled, unit = regex_for(ctx)
    frame, rejected = read_raw_frame(ctx, compiled)
    has_elapsed = "elapsed" in compiled.groupindex
    layout = Layout(delimiter="", duration_unit=unit, fields={"duration": "elapsed"} if has_elapsed else {})
    return layout, ctx.con.from_df(frame), rejected


def _load(ctx: SourceContext, layout: Layout, raw: duckdb.DuckDBPyRelation) -> None:
    """One source's raw columns staged and appended: every row is load_context's source."""
    publish_context(ctx, layout)
    load_rows(ctx, raw.project("*, (select source_key from load_context) as source_key"))


def publish_context(ctx: SourceContext, layout: Layout) -> None:
    """`load_context` for the source (or a batch's first: access_log_batch): what its staging model reads."""
    set_load_context(
        ctx,
        resolution_us(layout),
        duration_to_ms=_duration_to_ms(ctx, layout),
        time_is_end=bool(ctx.option("time_is_end", layout.time_is_end)),
    )


def load_rows(ctx: SourceContext, raw: duckdb.DuckDBPyRelation) -> None:
    """Stage raw columns that carry each row's source_key (view raw_access_log) as requests and append them
    to request_facts (publish_context first)."""
    raw.create_view("raw_access_log", replace=True)
    build_model(ctx.con, "stg_access_log__requests")
    append_requests(ctx.con, ctx.con.view("stg_access_log__requests"))
    drop_model(ctx.con, "stg_access_log__requests")
    ctx.con.execute("drop view raw_access_log")


def read(ctx: SourceContext) -> SourceResult:
    """Load one access log into request_facts; lines that do not fit the pattern are rejected."""
    pattern = ctx.option("format") or ctx.option("preset")
    if ctx.option("regex") or pattern in PRESET_REGEXES:
        layout, raw, rejected = _raw_from_regex(ctx)
        _load(ctx, layout, raw)
    elif pattern:
        layout = layout_of(ctx)
        rejected = csv_pieces.load_csv(ctx, lambda path, store: read_delimited(ctx.con, layout, [path], store),
                                       partial(_load, ctx, layout), has_header=False, quoting=(b'"', b"\\"))
    else:
        raise SourceError(f"{ctx.field}: an access_log needs `format` (the server's pattern), `preset` or `regex`")
    return SourceResult(rows=loaded_rows(ctx), rejected=rejected)
