"""Reader for server access logs (`kind: access_log`): the server's own pattern, read as delimited text."""

from __future__ import annotations

from tasks.sources.access_log_pattern import (
    CLF_TIME_FORMAT,
    DURATION_SCALE_TO_MS,
    Layout,
    PatternError,
    compile_pattern,
)
from tasks.sources.base import (
    SourceContext,
    SourceError,
    SourceResult,
    is_gzip,
    load_requests,
    reject_csv_errors,
    set_load_context,
)
from tasks.sqlmodels import model_sql

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


def read(ctx: SourceContext) -> SourceResult:
    """Load one access log into request_facts; lines that do not fit the pattern are rejected."""
    pattern = ctx.option("format") or ctx.option("preset")
    if not pattern:
        raise SourceError(f"{ctx.field}: an access_log needs `format` (the server's pattern) or `preset`")
    try:
        layout = compile_pattern(pattern)
    except PatternError as exc:
        raise SourceError(f"{ctx.field}.format: {exc}") from None
    raw = ctx.con.read_csv(
        str(ctx.file),
        sep=layout.delimiter,
        quotechar='"',
        escapechar="\\",
        header=False,
        na_values="-",
        auto_detect=False,
        columns=layout.columns,
        timestamp_format=CLF_TIME_FORMAT,
        compression="gzip" if is_gzip(ctx.file) else "none",
        store_rejects=True,
        strict_mode=True,
    )
    raw.project(", ".join(_raw_expressions(layout))).create_view("raw_access_log", replace=True)
    set_load_context(
        ctx,
        duration_to_ms=_duration_to_ms(ctx, layout),
        time_is_end=bool(ctx.option("time_is_end", layout.time_is_end)),
    )
    ctx.con.execute(model_sql("staging/stg_access_log__requests"))
    rows = load_requests(ctx, ctx.con.view("stg_access_log__requests"))
    rejected = reject_csv_errors(ctx)
    ctx.con.execute("drop view stg_access_log__requests")
    ctx.con.execute("drop view raw_access_log")
    return SourceResult(rows=rows, rejected=rejected)
