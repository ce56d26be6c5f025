"""soak_drift on fixture soaks: a steady host and one that slows down, a soak too short to judge, a run that is
no soak. Slopes, intervals and R^2 are recomputed with numpy/scipy from the raw log lines."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
WINDOW_S = 60
CALLS = 120  # per host and window, 2 per second
THRESHOLDS = {"avg_ms_drift_max_pct_per_h": 300, "p95_ms_drift_max_pct_per_h": 300,
              "calls_per_s_drift_max_pct_per_h": 300, "error_rate_drift_max_pp_per_h": 5}


def _elapsed_ms(host: str, window: int, n: int) -> int:
    """app1 wobbles around 11 ms with no trend; app2 gains 2 ms per window (a minute)."""
    wobble = (window * 3 % 4) + n % 3
    return 10 + wobble + (2 * window if host == "app2" else 0)


def _log(host: str, windows: int) -> str:
    lines = []
    for window in range(windows):
        for n in range(CALLS):
            at = START + timedelta(seconds=WINDOW_S * window + WINDOW_S * n / CALLS)
            status = 500 if host == "app2" and n % 40 == window % 40 else 200
            lines.append(f'10.0.0.1 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] "POST /echo HTTP/1.1" {status} 12 '
                         f'{_elapsed_ms(host, window, n)}')
    return "\n".join(lines) + "\n"


def _soak(root, windows: int, soak: dict | None, run_id: str):
    iterations = [{"index": w + 1, "start": (START + timedelta(seconds=WINDOW_S * w)).isoformat(),
                   "end": (START + timedelta(seconds=WINDOW_S * (w + 1))).isoformat(), "load": {"vus": 4}}
                  for w in range(windows)]
    sources = [{"kind": "access_log", "host": host, "path": f"{host}.log", "preset": "tomcat_common_d",
                "duration_unit": "ms"} for host in ("app1", "app2")]
    extra = {"soak": soak} if soak else {}
    return write_bundle(root, {f"{host}.log": _log(host, windows) for host in ("app1", "app2")}, sources, iterations,
                        run_id=run_id, thresholds=THRESHOLDS, **extra)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("soak")
    for run_id, windows, soak in (("long", 10, {"window_s": WINDOW_S}), ("short", 2, {"window_s": WINDOW_S}),
                                  ("plain", 10, None)):
        ingest_bundle(_soak(tmp / run_id, windows, soak, run_id), tmp / "w.duckdb", progress=lambda m: None)
    return tmp / "w.duckdb"


def _rows(warehouse, run_id: str) -> pd.DataFrame:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute("select * from soak_drift where run_id = $r", {"r": run_id}).df()


def _raw(host: str, windows: int) -> pd.DataFrame:
    """The log's lines parsed again: time, duration, status; window by time."""
    parts = pd.Series(_log(host, windows).splitlines()).str.extract(r"\[([^\]]+)\] \"[^\"]+\" (\d+) \d+ (\d+)$")
    frame = pd.DataFrame({"at": pd.to_datetime(parts[0], format="%d/%b/%Y:%H:%M:%S %z"),
                          "status": parts[1].astype(int), "ms": parts[2].astype(float)})
    frame["window"] = ((frame["at"] - START).dt.total_seconds() // WINDOW_S).astype(int)
    return frame


def _expected(values: np.ndarray, scale: float) -> tuple[float, float, float, float]:
    """OLS slope per hour over the windows' middles, its 95 % interval and R^2, times `scale`."""
    x = (np.arange(len(values)) * WINDOW_S + WINDOW_S / 2) / 3600
    slope, intercept = np.polyfit(x, values, 1)
    residuals = values - (slope * x + intercept)
    se = np.sqrt(residuals @ residuals / (len(x) - 2) / ((x - x.mean()) @ (x - x.mean())))
    half = stats.t.ppf(0.975, len(x) - 2) * se
    spread = (values - values.mean()) @ (values - values.mean())
    r2 = 1 - residuals @ residuals / spread if spread else 1.0
    return slope * scale, (slope - half) * scale, (slope + half) * scale, r2


def test_a_slowing_host_drifts_and_a_steady_one_is_stable(warehouse):
    rows = _rows(warehouse, "long").set_index(["side", "host", "metric"])
    for host in ("app1", "app2"):
        raw = _raw(host, 10).groupby("window")
        per_window = {
            "avg_ms": raw["ms"].mean().to_numpy(),
            "p95_ms": raw["ms"].quantile(0.95).to_numpy(),
            "calls_per_s": (raw.size() / WINDOW_S).to_numpy(),
            "error_rate": raw["status"].apply(lambda s: (s >= 500).mean()).to_numpy(),
        }
        for metric, values in per_window.items():
            scale = 100 if metric == "error_rate" else 100 / values.mean()
            slope, low, high, r2 = _expected(values, scale)
            row = rows.loc[("server", host, metric)]
            assert row["windows"] == 10
            assert row["slope_pct_per_h"] == pytest.approx(slope, abs=1e-6)
            assert row["ci_low_pct_per_h"] == pytest.approx(low, abs=1e-3)
            assert row["ci_high_pct_per_h"] == pytest.approx(high, abs=1e-3)
            assert row["r2"] == pytest.approx(r2, abs=1e-9)
            tolerance = THRESHOLDS[f"{metric}_drift_max_{'pp' if metric == 'error_rate' else 'pct'}_per_h"]
            expected = ("stable" if -tolerance <= low and high <= tolerance
                        else "drifting" if low > tolerance or high < -tolerance else "inconclusive")
            assert row["verdict"] == expected, (host, metric, low, high)
    assert rows.loc[("server", "app2", "avg_ms"), "verdict"] == "drifting"
    assert rows.loc[("server", "app2", "p95_ms"), "verdict"] == "drifting"
    assert rows.loc[("server", "app1", "avg_ms"), "verdict"] == "stable"
    assert rows.loc[("server", "app1", "calls_per_s"), "verdict"] == "stable"
    # the whole side: both hosts' calls together
    assert rows.loc[("server", "*", "calls_per_s"), "level"] == pytest.approx(2 * CALLS / WINDOW_S)


def test_a_soak_of_two_windows_is_too_short_to_judge_and_a_plain_run_has_no_rows(warehouse):
    short = _rows(warehouse, "short")
    assert len(short) and set(short["verdict"]) == {"too short to judge"}
    assert short["finding"].str.contains("at least 5 are needed").all()
    assert _rows(warehouse, "plain").empty
