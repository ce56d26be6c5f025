"""iteration_stats, iteration_status_stats, iteration_summary and the label rows of series_values (the four
grains of int_request_stats) against numpy over the raw durations: counts and exact percentiles by the run's
percentile_method (linear: numpy's default; nearest_rank: its inverted_cdf), for durations that repeat (read
from the counts of distinct durations) and for durations nearly all distinct (sorted)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
ITERATIONS = [(1, 0, 100), (2, 100, 200)]


def _requests(seed: int, scales: tuple[float, float]) -> pd.DataFrame:
    """Two hosts, 3000 requests each over 200 s: whole durations of exponential spread, a few statuses, 3 labels."""
    rng = np.random.default_rng(seed)
    frames = []
    for host, scale in zip(("app1", "app2"), scales):
        n = 3000
        frames.append(pd.DataFrame({
            "host": host,
            "second": rng.integers(0, 200, n),
            "elapsed": np.round(rng.exponential(scale, n)).astype(int) + 1,
            "status": rng.choice([200, 200, 200, 404, 503], n),
            "label": rng.choice(["/a", "/b", "/c"], n),
        }))
    frame = pd.concat(frames, ignore_index=True)
    frame["iteration"] = np.where(frame["second"] < 100, 1, 2)
    return frame


@pytest.mark.parametrize("method, numpy_method", [("linear", "linear"), ("nearest_rank", "inverted_cdf")])
@pytest.mark.parametrize("unit, scales, repeating", [("ms", (10, 30), True), ("us", (40_000, 400_000), False)],
                         ids=["repeating-ms", "distinct-us"])
def test_percentiles_and_counts_match_numpy(tmp_path, unit, scales, repeating, method, numpy_method):
    frame = _requests(7, scales)
    distinct = frame["elapsed"].nunique()
    assert (distinct * 10 <= len(frame)) == repeating  # which way the model computes them
    files, sources = {}, []
    for host, rows in frame.groupby("host"):
        files[f"{host}.log"] = "".join(
            f'10.0.0.1 - - [{START + timedelta(seconds=int(s)):%d/%b/%Y:%H:%M:%S} +0000] "GET {path} HTTP/1.1" {st} 5 '
            f'{ms}\n' for s, ms, st, path in zip(rows["second"], rows["elapsed"], rows["status"], rows["label"]))
        sources.append({"kind": "access_log", "host": host, "path": f"{host}.log", "preset": "tomcat_common_d",
                        "duration_unit": unit})
    iterations = [{"index": i, "start": (START + timedelta(seconds=b)).isoformat(),
                   "end": (START + timedelta(seconds=e)).isoformat()} for i, b, e in ITERATIONS]
    thresholds = {"slow_call_ms": 50}
    bundle = write_bundle(tmp_path / "b", files, sources, iterations, thresholds=thresholds, percentile_method=method)
    ingest_bundle(bundle, tmp_path / "w.duckdb", progress=lambda m: None)
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        by_host = con.execute("select * from iteration_stats where side = 'server' order by iteration, host").df()
        by_status = con.execute("select * from iteration_status_stats where side = 'server' "
                                "order by iteration, host, status_code").df()
        by_side = con.execute("select * from iteration_summary where side = 'server' order by iteration").df()
        by_label = con.execute("pivot (select iteration, label, metric, value from series_values where side = 'server' "
                               "and host = '(all)' and label <> '(all)') on metric using any_value(value) "
                               "order by iteration, label").df()
    for got, keys in ((by_host, ["iteration", "host"]), (by_status, ["iteration", "host", "status"])):
        expected = list(frame.groupby(keys))
        assert len(got) == len(expected)
        for row, (_, group) in zip(got.itertuples(), expected):
            durations = group["elapsed"].to_numpy(dtype=float) / (1000 if unit == "us" else 1)
            assert row.calls == len(durations)
            assert row.errors == int((group["status"] >= 400).sum())
            # slow: at or over the threshold (NAS2 counts calls >= 500 ms); a 50 ms call is one
            assert row.slow_calls == int((durations >= 50).sum()) and row.slow_call_ms == 50
            assert row.avg_ms == pytest.approx(durations.mean(), rel=1e-12)
            assert (row.min_ms, row.max_ms) == pytest.approx((durations.min(), durations.max()), rel=1e-12)
            _assert_percentiles(row, durations, numpy_method)
    for got, keys in ((by_side, ["iteration"]), (by_label, ["iteration", "label"])):
        expected = list(frame.groupby(keys))
        assert len(got) == len(expected)
        for row, (_, group) in zip(got.itertuples(), expected):
            _assert_percentiles(row, group["elapsed"].to_numpy(dtype=float) / (1000 if unit == "us" else 1),
                                numpy_method)


def _assert_percentiles(row, durations: np.ndarray, numpy_method: str) -> None:
    for name, q in (("p50_ms", 0.5), ("p90_ms", 0.9), ("p95_ms", 0.95), ("p99_ms", 0.99)):
        expected = np.quantile(durations, q, method=numpy_method)
        assert getattr(row, name) == pytest.approx(expected, rel=1e-12, abs=1e-9), name
