"""minute_stats against a pandas computation from the raw log: calls, p95 (by the run's percentile_method, as
numpy takes it) and the minute's main iteration."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
# One request a second for three minutes, elapsed = second of the run % 97 + 1 ms but three slow calls a minute
# (100 ms + the second: ranks 58-60 of the minute's 60, so its p95 differs by method). Iteration 1 covers the
# first 40 s of minute 1 (most of it); iteration 2 only the last 20 s of minute 2 (most of it outside).
ITERATIONS = [(1, 0, 40), (2, 100, 160)]


def _requests(modulus: int) -> pd.DataFrame:
    seconds = np.arange(180)
    frame = pd.DataFrame({"at": [START + timedelta(seconds=int(s)) for s in seconds],
                          "elapsed": np.where(seconds % 20 == 19, 100 + seconds, seconds % modulus + 1)})
    frame["iteration"] = None
    for index, begin, end in ITERATIONS:
        frame.loc[(seconds >= begin) & (seconds < end), "iteration"] = index
    return frame


# about 100 distinct durations in 180 requests: p95 by sorting them; 16 (they repeat): from their counts
@pytest.mark.parametrize("method, numpy_method", [("linear", "linear"), ("nearest_rank", "inverted_cdf")])
@pytest.mark.parametrize("modulus", [97, 7], ids=["nearly-distinct", "repeating"])
def test_minute_series_and_the_iteration_most_of_each_minute_belongs_to(tmp_path, modulus, method, numpy_method):
    frame = _requests(modulus)
    log = "".join(f'10.0.0.1 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] "GET /a HTTP/1.1" 200 5 {ms}\n'
                  for at, ms in zip(frame["at"], frame["elapsed"]))
    iterations = [{"index": i, "start": (START + timedelta(seconds=b)).isoformat(),
                   "end": (START + timedelta(seconds=e)).isoformat()} for i, b, e in ITERATIONS]
    source = {"kind": "access_log", "host": "app", "path": "a.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
    ingest_bundle(write_bundle(tmp_path / "b", {"a.log": log}, [source], iterations, percentile_method=method),
                  tmp_path / "w.duckdb", progress=lambda m: None)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        got = con.execute("select minute_at, iteration, calls, p95_ms from minute_stats order by minute_at").df()

    frame["minute"] = frame["at"].dt.floor("min")
    expected = []
    for minute, rows in frame.groupby("minute"):
        shares = rows["iteration"].fillna(0).value_counts()  # 0: outside every iteration
        main = shares.index[0]
        expected.append((minute, None if main == 0 else main, len(rows),
                         np.quantile(rows["elapsed"], 0.95, method=numpy_method)))
    assert list(got["calls"]) == [n for _, _, n, _ in expected]
    assert list(got["p95_ms"]) == pytest.approx([p95 for _, _, _, p95 in expected], rel=1e-12)
    assert [None if pd.isna(i) else int(i) for i in got["iteration"]] == [main for _, main, _, _ in expected]
    assert [main for _, main, _, _ in expected] == [1, None, 2]  # minute 2: 20 calls in iteration 2, 40 outside
