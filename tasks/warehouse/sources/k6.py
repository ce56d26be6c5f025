"""Readers for k6 output: `k6_json` (`--out json`), `k6_csv` (`--out csv`), and `k6_summary` (in k6_summary.py).

One request is one `http_req_duration` sample. Its time is the END of the request, so started_at is that
time minus the duration; the SQL models in `sql/staging/stg_k6__*.sql` say why, and where in k6 it is.
Both readers let DuckDB do all the work (no Python per line), so a 10 M-request file costs one scan for
its requests; `--out json` files get a second one for the points of custom metrics and dropped_iterations
(k6_metric_points), which requirements may judge, only when the file declares such a metric.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb

from tasks.bundle.files import HEADER_CHARS, is_gzip, open_text
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources import csv_pieces
from tasks.warehouse.sources.base import (
    SourceContext,
    SourceError,
    SourceResult,
    load_requests,
    loaded_rows,
    set_load_context,
)
from tasks.warehouse.sources.k6_summary import read_k6_summary

__all__ = ["read_k6_csv", "read_k6_json", "read_k6_summary"]

CSV_REQUIRED_COLUMNS = ("metric_name", "timestamp", "metric_value")
METRIC_COLUMNS = {
    "type": "VARCHAR",
    "metric": "VARCHAR",
    "data": "STRUCT(time VARCHAR, value DOUBLE, type VARCHAR, tags STRUCT(name VARCHAR))",
}
JSON_COLUMNS = {
    "type": "VARCHAR",
    "metric": "VARCHAR",
    "data": "STRUCT(time VARCHAR, value DOUBLE, "
    "tags STRUCT(name VARCHAR, url VARCHAR, method VARCHAR, status VARCHAR, expected_response VARCHAR))",
}


def _read_json(ctx: SourceContext, columns: dict[str, str]) -> duckdb.DuckDBPyRelation:
    """The file as DuckDB's JSON reader sees it with these columns only: no sniffing, bad lines as NULLs."""
    return ctx.con.read_json(
        str(ctx.file),
        format="newline_delimited",
        columns=columns,
        compression="gzip" if is_gzip(ctx.file) else "uncompressed",
        ignore_errors=True,
    )


def read_k6_json(ctx: SourceContext) -> SourceResult:
    """Load the http_req_duration points of one `k6 run --out json=FILE` file into request_facts, and the
    custom metrics' and dropped_iterations' points into k6_metric_points."""
    con = ctx.con
    _read_json(ctx, JSON_COLUMNS).create_view("raw_k6_json", replace=True)
    build_model(con, "stg_k6__points")
    set_load_context(ctx)
    loaded = load_requests(ctx, con.view("stg_k6__points"))
    # Lines read_json could not read came through as all-NULL rows and were loaded with the rest: deleting
    # them counts them without a second pass over the file (a gzip file is read on one thread and its scan
    # is most of the cost). Only when there are some does a second pass find their line numbers.
    malformed = con.execute(
        "delete from request_facts where source_key = $key and label is null and method is null "
        "and started_at is null and elapsed_ms is null and status_code is null",
        {"key": ctx.source_key},
    ).fetchone()[0]
    drop_model(con, "stg_k6__points")
    con.execute("drop view raw_k6_json")
    if malformed:
        _reject_malformed_lines(ctx)
    _load_metric_points(ctx)
    rows = loaded - malformed
    notes = () if rows else (f"{ctx.source.path}: no http_req_duration points (is this k6 --out json output?)",)
    return SourceResult(rows=rows, rejected=malformed, notes=notes)


def _load_metric_points(ctx: SourceContext) -> None:
    """Keep the custom metrics' and dropped_iterations' points (a second pass: requirements may judge them),
    unless the file declares none of them (its `Metric` lines, found by the fingerprint pass)."""
    declared = ctx.fingerprint().marked
    if declared is not None:
        names = [line.get("metric") for line in map(_json_object, declared) if line.get("type") == "Metric"]
        kept = ctx.con.execute("select count(*) from unnest($names::varchar[]) as t(metric) "
                               "where k6_kept_metric(metric)", {"names": names}).fetchone()[0]
        if not kept:
            return
    _read_json(ctx, METRIC_COLUMNS).create_view("raw_k6_metrics", replace=True)
    build_model(ctx.con, "stg_k6__metric_points")
    build_model(ctx.con, "k6_metric_points")
    drop_model(ctx.con, "stg_k6__metric_points")
    ctx.con.execute("drop view raw_k6_metrics")


def _json_object(line: bytes) -> dict:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _reject_malformed_lines(ctx: SourceContext) -> None:
    """Record every line stg_k6__points could not read, with its line number (a second pass over the file)."""
    raw = ctx.con.read_csv(
        str(ctx.file),
        columns={"line": "VARCHAR"},
        header=False,
        sep="\x1f",
        quotechar="",
        escapechar="",
        auto_detect=False,
        strict_mode=False,
        compression="gzip" if is_gzip(ctx.file) else "none",
    )
    raw.create_view("raw_k6_lines", replace=True)
    build_model(ctx.con, "stg_k6__json_lines")
    ctx.con.execute(
        "insert into rejected_lines select $run_id, $host, $path, line_no, reason, left(line, 200) "
        "from stg_k6__json_lines",
        {"run_id": ctx.manifest.run_id, "host": ctx.source.host, "path": ctx.source.path},
    )
    drop_model(ctx.con, "stg_k6__json_lines")
    ctx.con.execute("drop view raw_k6_lines")


def _csv_header(ctx: SourceContext) -> list[str]:
    """The file's own column names (they differ between k6 versions and systemTags settings)."""
    with open_text(ctx.file) as handle:
        first = handle.readline(HEADER_CHARS + 1)  # a 100 MB line without newline is not read whole
    try:
        header = next(csv.reader([first]), []) if len(first) <= HEADER_CHARS else []
    except csv.Error as exc:  # a field past the csv module's limit
        raise SourceError(f"{ctx.field}: line 1 is not a k6 CSV header ({exc})") from None
    missing = [name for name in CSV_REQUIRED_COLUMNS if name not in header]
    if missing:
        raise SourceError(
            f"{ctx.field}: not k6 CSV output: the header lacks {', '.join(missing)} "
            f"(expected metric_name,timestamp,metric_value,...; got {first.strip()[:120]!r}"
            + (f", a line of more than {HEADER_CHARS:,} characters)" if len(first) > HEADER_CHARS else ")")
        )
    return header


def read_k6_csv(ctx: SourceContext) -> SourceResult:
    """Load the http_req_duration rows of one `k6 run --out csv=FILE` file into request_facts."""
    header = _csv_header(ctx)

    def read_file(path: Path, store: bool) -> duckdb.DuckDBPyRelation:
        return ctx.con.read_csv(
            str(path),
            header=True,
            sep=",",
            quotechar='"',
            escapechar='"',
            auto_detect=False,  # the sniffer gives up on a small file with one bad line; the header says it all
            columns={name: "VARCHAR" for name in header},
            compression="gzip" if is_gzip(path) else "none",
            strict_mode=True,
            **csv_pieces.error_options(store),
        )

    def load(raw: duckdb.DuckDBPyRelation) -> None:
        raw.create_view("raw_k6_csv", replace=True)
        build_model(ctx.con, "stg_k6__csv_points")
        set_load_context(ctx)
        load_requests(ctx, ctx.con.view("stg_k6__csv_points"))
        drop_model(ctx.con, "stg_k6__csv_points")
        ctx.con.execute("drop view raw_k6_csv")

    def accepted() -> int:  # every record the reader took, of any metric (the load keeps http_req_duration)
        return read_file(ctx.file, False).aggregate("count(*)").fetchone()[0]

    rejected = csv_pieces.load_csv(ctx, read_file, load, has_header=True, accepted=accepted)
    rows = loaded_rows(ctx)
    notes = () if rows else (f"{ctx.source.path}: no http_req_duration rows",)
    return SourceResult(rows=rows, rejected=rejected, notes=notes)
