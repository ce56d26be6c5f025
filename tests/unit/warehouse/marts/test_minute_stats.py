"""minute_stats against a pandas computation from the raw log: calls, p95 and the minute's main iteration."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
# One request a second for three minutes, elapsed = second of the run % 97 + 1 ms. Iteration 1 covers the
# first 40 s of minute 1 (most of it); iteration 2 only the last 20 s of minute 2 (most of it outside).
ITERATIONS = [(1, 0, 40), (2, 100, 160)]


def _requests(modulus: int) -> pd.DataFrame:
    seconds = np.arange(180)
    frame = pd.DataFrame({"at": [START + timedelta(seconds=int(s)) for s in seconds], "elapsed": seconds % modulus + 1})
    frame["iteration"] = None
    for index, begin, end in ITERATIONS:
        frame.loc[(seconds >= begin) & (seconds < end), "iteration"] = index
    return frame


# 97 distinct durations in 180 requests: p95 by sorting them; 7 (they repeat): from their counts
@pytest.mark.parametrize("modulus", [97, 7], ids=["nearly-distinct", "repeating"])
def test_minute_series_and_the_iteration_most_of_each_minute_belongs_to(tmp_path, modulus):
    frame = _requests(modulus)
    log = "".join(f'10.0.0.1 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] "GET /a HTTP/1.1" 200 5 {ms}\n'
                  for at, ms in zip(frame["at"], frame["elapsed"]))
    iterations = [{"index": i, "start": (START + timedelta(seconds=b)).isoformat(),
                   "end": (START + timedelta(seconds=e)).isoformat()} for i, b, e in ITERATIONS]
    source = {"kind": "access_log", "host": "app", "path": "a.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
    ingest_bundle(write_bundle(tmp_path / "b", {"a.log": log}, [source], iterations), tmp_path / "w.duckdb",
                  progress=lambda m: None)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        got = con.execute("select minute_at, iteration, calls, p95_ms from minute_stats order by minute_at").df()

    frame["minute"] = frame["at"].dt.floor("min")
    expected = []
    for minute, rows in frame.groupby("minute"):
        shares = rows["iteration"].fillna(0).value_counts()  # 0: outside every iteration
        main = shares.index[0]
        expected.append((minute, None if main == 0 else main, len(rows), np.percentile(rows["elapsed"], 95)))
    assert [(row.calls, row.p95_ms) for row in got.itertuples()] == [(n, p95) for _, _, n, p95 in expected]
    assert [None if pd.isna(i) else int(i) for i in got["iteration"]] == [main for _, main, _, _ in expected]
    assert [main for _, main, _, _ in expected] == [1, None, 2]  # minute 2: 20 calls in iteration 2, 40 outside
