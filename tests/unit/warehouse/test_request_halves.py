"""int_request_counts reads a run's counted rows in two halves split at int_request_halves' iteration: the split only
balances the two scans, so the counts are the same wherever it falls, and they are the rows' own counts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
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
KEY = ["grain", "side", "host", "role", "status_code", "label", "iteration", "is_warmup", "is_boundary", "minute_us",
       "elapsed_ms"]


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
    root = tmp_path_factory.mktemp("halves")
    iterations = [{"index": i, "start": (START + timedelta(seconds=20 * (i - 1))).isoformat(),
                   "end": (START + timedelta(seconds=20 * (i - 1) + 10)).isoformat()} for i in CALLS]
    sources = [{"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d",
                "duration_unit": "ms"}]
    bundle = write_bundle(root / "b", {"access.log": _log()}, sources, iterations)
    ingest_bundle(bundle, root / "w.duckdb", progress=lambda message: None)
    return root / "w.duckdb"


def _counts(con, params: dict) -> pd.DataFrame:
    build_model(con, "int_request_counts", params)
    frame = con.execute("select * from int_request_counts").df()
    return frame.sort_values(KEY, na_position="first").reset_index(drop=True)


def test_the_split_halves_the_counted_rows_and_the_counts_do_not_depend_on_it(warehouse):
    with open_warehouse(warehouse, write=True) as con:
        register(con)
        params = {"run_id": "test-run"}
        build_model(con, "int_request_paths", params)
        given = build_model(con, "int_request_halves", params)
        rows = con.execute("select * from requests").df()
        per_iteration = rows.dropna(subset=["iteration"]).groupby("iteration").size().sort_index()
        up_to = per_iteration.cumsum()
        expected = int(per_iteration.index[np.argmin(np.abs(2 * up_to.to_numpy() - up_to.iloc[-1]))])
        assert given == {"split_iteration": expected} and expected == 2  # 200 + 700 of 1,200 placed calls
        counts = {split: _counts(con, params | {"split_iteration": split}) for split in (0, 1, 2, 3, 4)}

    for split, frame in counts.items():
        pd.testing.assert_frame_equal(frame, counts[0], check_dtype=False, obj=f"split at {split}")
    # the rows' own counts at the `iteration` grain, taken with pandas from the view
    rows["is_error"] = rows["is_error"].astype(bool)
    keys = ["side", "host", "role", "status_code", "label", "iteration", "is_warmup", "elapsed_ms"]
    own = (rows.groupby(keys, dropna=False).agg(calls=("is_error", "size"), errors=("is_error", "sum"))
           .reset_index().sort_values(keys, na_position="first").reset_index(drop=True))
    measured = counts[2][counts[2]["grain"] == "iteration"][[*keys, "calls", "errors"]]
    measured = measured.sort_values(keys, na_position="first").reset_index(drop=True)
    assert own["calls"].sum() == 1200 + 3 * GAP_CALLS
    pd.testing.assert_frame_equal(measured, own, check_dtype=False)
