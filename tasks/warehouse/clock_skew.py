"""Clock skew between the hosts of a run, measured from its requests; rows of a skewed host re-placed.

Called by the ingest inside its transaction, after every source is read and before the marts are built.
For every server host, `sql/base/clock_skew.sql` measures how far its clock is from the
reference clock (the client host with the most requests) and writes `clock_skew`. Where a host is off by
more than `thresholds.clock_skew_max_s` (default 2 s) and the estimate can be trusted, its requests (and
the host metrics it stamped itself) are placed in iterations by written time - skew: a 30 s skew would
otherwise move whole seconds of calls into the wrong iteration. Times stay exactly as written; only the
`iteration` of the moved rows changes, and `clock_skew` counts them. Under the threshold nothing moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from tasks.bundle.manifest import Manifest
from tasks.bundle.thresholds import THRESHOLDS
from tasks.warehouse.models import build_model, drop_model
from tasks.warehouse.sources.base import publish_load_context

MAX_MISMATCH_SHARE = 0.5  # above it the two sides do not log the same traffic: the estimate is not used
MAX_FIT_RATIO = 0.5  # the best shift's mismatch must be under this share of the clocks' as written to move rows
MIN_REQUESTS = 20  # per side, near the run
LEAD_S = 60  # seconds before a host's first request compared too (it logged nothing there)


@dataclass(frozen=True)
class ClockSkew:
    """One server host's clock against the reference (positive: the host is ahead)."""

    host: str
    reference_host: str | None
    skew_s: float | None
    is_corrected: bool
    requests_replaced: int
    samples_replaced: int
    note: str


def skew_parameters(manifest: Manifest) -> dict[str, object]:
    """The bound parameters of the clock_skew model for one run, thresholds from its manifest."""
    return {
        "run_id": manifest.run_id,
        "threshold_s": float(manifest.thresholds.get("clock_skew_max_s", THRESHOLDS["clock_skew_max_s"])),
        "max_lag_s": int(manifest.thresholds.get("clock_skew_search_s", THRESHOLDS["clock_skew_search_s"])),
        "max_mismatch_share": MAX_MISMATCH_SHARE,
        "max_fit_ratio": MAX_FIT_RATIO,
        "min_requests": MIN_REQUESTS,
        "lead_s": LEAD_S,
    }


def _apply_moves(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Update the iteration of the moved rows, source by source (each at its own resolution), and count
    them per host in clock_skew."""
    params = {"run_id": run_id}
    con.execute("create or replace temp table clock_moves (host varchar, fact_table varchar)")
    for source_key, in con.execute("select source_key from clock_corrections($run_id)", params).fetchall():
        publish_load_context(con, source_key)
        build_model(con, "int_clock_moves", params)
        for table, fact_table in (("request_facts", "request"), ("host_sample_facts", "sample")):
            con.execute(
                f"update {table} set iteration = moves.placed_iteration from int_clock_moves as moves "
                f"where moves.fact_table = '{fact_table}' and {table}.rowid = moves.fact_rowid"
            )
        con.execute("insert into clock_moves select host, fact_table from int_clock_moves")
    con.execute(
        "update clock_skew set "
        "requests_replaced = (select count(*) from clock_moves as m where m.host = clock_skew.host "
        "and m.fact_table = 'request'), "
        "samples_replaced = (select count(*) from clock_moves as m where m.host = clock_skew.host "
        "and m.fact_table = 'sample') "
        "where run_id = $run_id and is_corrected",
        params,
    )
    drop_model(con, "int_clock_moves")
    con.execute("drop table clock_moves")


def place_by_corrected_clocks(
    con: duckdb.DuckDBPyConnection, manifest: Manifest, progress: Callable[[str], None] = lambda message: None
) -> list[ClockSkew]:
    """Measure every server host's clock skew, store it in `clock_skew`, re-place the rows of skewed hosts."""
    params = skew_parameters(manifest)
    build_model(con, "clock_skew", params)  # replaces the run's rows
    skews = _read(con, manifest.run_id)
    if any(skew.is_corrected for skew in skews):
        _apply_moves(con, manifest.run_id)
        skews = _read(con, manifest.run_id)
    for skew in skews:
        progress(_describe(skew))
    return skews


def _read(con: duckdb.DuckDBPyConnection, run_id: str) -> list[ClockSkew]:
    rows = con.execute(
        "select host, reference_host, skew_s, is_corrected, requests_replaced, samples_replaced, note "
        "from clock_skew where run_id = $run_id order by host",
        {"run_id": run_id},
    ).fetchall()
    return [ClockSkew(*row) for row in rows]


def _describe(skew: ClockSkew) -> str:
    if skew.skew_s is None:
        return f"clock of {skew.host}: not measured ({skew.note})"
    text = f"clock of {skew.host}: {skew.skew_s:+.2f} s against {skew.reference_host}"
    if skew.is_corrected:
        text += (f"; its rows placed in iterations by corrected time ({skew.requests_replaced:,} requests and "
                 f"{skew.samples_replaced:,} samples moved)")
    return text
