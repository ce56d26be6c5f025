"""int_request_counts: the counted rows of a run, placed in iterations or not, as the rows' own counts (pandas)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.functions import register
from tasks.warehouse.ingest import ingest_bundle
from tasks.warehouse.models import build_model
from tests.bundles import write_bundle

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
CALLS = {1: 200, 2: 700, 3: 300}  # per 10-second iteration, 20 s apart: 50 calls in each gap are in no iteration
GAP_CALLS = 50


def _log() -> str:
    lines = []
    for iteration, calls in CALLS.items():
        begin = START + timedelta(seconds=20 * (iteration - 1))
        stamps = [begin + timedelta(seconds=10 * n / calls) for n in range(calls)]
        stamps += [begin + timedelta(seconds=10 + 10 * n / GAP_CALLS) for n in range(GAP_CALLS)]
        for n, at in enumerate(stamps):
            status = 500 if n % 37 == 0 else 200
            lines.append(f'10.0.0.1 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] "GET /api/{n % 3} HTTP/1.1" {status} 12 '
                         f'{1 + (n * 7) % 9}')
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("counts")
    iterations = [{"index": i, "start": (START + timedelta(seconds=20 * (i - 1))).isoformat(),
                   "end": (START + timedelta(seconds=20 * (i - 1) + 10)).isoformat()} for i in CALLS]
    sources = [{"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d",
                "duration_unit": "ms"}]
    bundle = write_bundle(root / "b", {"access.log": _log()}, sources, iterations)
    ingest_bundle(bundle, root / "w.duckdb", progress=lambda message: None)
    return root / "w.duckdb"


def test_the_counts_at_the_iteration_grain_are_the_rows_own(warehouse):
    with open_warehouse(warehouse, write=True) as con:
        register(con)
        params = {"run_id": "test-run"}
        build_model(con, "int_request_paths", params)
        build_model(con, "int_request_counts", params)
        counts = con.execute("select * from int_request_counts where grain = 'iteration'").df()
        rows = con.execute("select * from requests").df()
    rows["is_error"] = rows["is_error"].astype(bool)
    keys = ["side", "host", "role", "status_code", "label", "iteration", "is_warmup", "elapsed_ms"]
    own = (rows.groupby(keys, dropna=False).agg(calls=("is_error", "size"), errors=("is_error", "sum"))
           .reset_index().sort_values(keys, na_position="first").reset_index(drop=True))
    measured = counts[[*keys, "calls", "errors"]].sort_values(keys, na_position="first").reset_index(drop=True)
    assert own["calls"].sum() == 1200 + 3 * GAP_CALLS and own["errors"].sum() > 0
    pd.testing.assert_frame_equal(measured, own, check_dtype=False)
