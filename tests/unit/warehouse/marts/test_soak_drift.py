"""soak_drift on fixture soaks: a steady host and one that slows down, a soak too short to judge, a run that is
no soak. Slopes, intervals and R^2 are recomputed with numpy/scipy from the raw log lines. And a soak's
target from an earlier run's capacity (load.target_from): the right series, and clear errors before any load."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tasks.bundle.soak import TargetFrom
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tasks.warehouse.soak_target import SoakTargetError, resolve_soak_target
from tests.bundles import write_bundle
from tests.independent import drift_fit, drift_verdict
from tests.lakeserver import on_both_engines

START = datetime(2026, 1, 1, 10, 0, 0, tzinfo=timezone.utc)
WINDOW_S = 60
CALLS = 120  # per host and window, 2 per second
THRESHOLDS = {"avg_ms_drift_max_pct_per_h": 300, "p95_ms_drift_max_pct_per_h": 300,
              "calls_per_s_drift_max_pct_per_h": 300, "error_rate_drift_max_pp_per_h": 5}


def _elapsed_ms(host: str, window: int, n: int) -> int:
    """app1 wobbles around 11 ms with no trend; app2 gains 2 ms per window (a minute)."""
    wobble = (window * 3 % 4) + n % 3
    return 10 + wobble + (2 * window if host == "app2" else 0)


def _ramp_calls(window: int) -> int:
    """The non-soak run is a ramp in two series (message sizes): 1 to 5 VUs, throughput rising with them."""
    return 24 * (window % 5 + 1)


def _log(host: str, windows: int, calls_of=lambda window: CALLS) -> str:
    lines = []
    for window in range(windows):
        calls = calls_of(window)
        for n in range(calls):
            at = START + timedelta(seconds=WINDOW_S * window + WINDOW_S * n / calls)
            status = 500 if host == "app2" and n % 40 == window % 40 else 200
            lines.append(f'10.0.0.1 - - [{at:%d/%b/%Y:%H:%M:%S} +0000] "POST /echo HTTP/1.1" {status} 12 '
                         f'{_elapsed_ms(host, window, n)}')
    return "\n".join(lines) + "\n"


def _soak(root, windows: int, soak: dict | None, run_id: str):
    """A soak of equal windows at 4 VUs, or (soak None) a ramp of 1 to 5 VUs over two message sizes."""
    def load(window: int) -> dict:
        return {"vus": 4} if soak else {"vus": window % 5 + 1, "message_size": 1024 if window < 5 else 2048}

    iterations = [{"index": w + 1, "start": (START + timedelta(seconds=WINDOW_S * w)).isoformat(),
                   "end": (START + timedelta(seconds=WINDOW_S * (w + 1))).isoformat(), "load": load(w)}
                  for w in range(windows)]
    sources = [{"kind": "access_log", "host": host, "path": f"{host}.log", "preset": "tomcat_common_d",
                "duration_unit": "ms"} for host in ("app1", "app2")]
    extra = {"soak": soak} if soak else {}
    logs = {f"{host}.log": _log(host, windows, *([] if soak else [_ramp_calls])) for host in ("app1", "app2")}
    return write_bundle(root, logs, sources, iterations, run_id=run_id, thresholds=THRESHOLDS, **extra)


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("soak")
    for run_id, windows, soak in (("long", 10, {"window_s": WINDOW_S}), ("short", 2, {"window_s": WINDOW_S}),
                                  ("plain", 10, None)):
        ingest_bundle(_soak(tmp / run_id, windows, soak, run_id), tmp / "w.duckdb", progress=lambda m: None)
    return tmp / "w.duckdb"


warehouse = on_both_engines("warehouse_file", "soak")  # the marts' checks on a file and on a lake


def _rows(warehouse, run_id: str) -> pd.DataFrame:
    with open_warehouse(warehouse) as con:
        return con.execute("select * from soak_drift where run_id = $r", {"r": run_id}).df()


def _raw(host: str, windows: int) -> pd.DataFrame:
    """The log's lines parsed again: time, duration, status; window by time."""
    parts = pd.Series(_log(host, windows).splitlines()).str.extract(r"\[([^\]]+)\] \"[^\"]+\" (\d+) \d+ (\d+)$")
    frame = pd.DataFrame({"at": pd.to_datetime(parts[0], format="%d/%b/%Y:%H:%M:%S %z"),
                          "status": parts[1].astype(int), "ms": parts[2].astype(float)})
    frame["window"] = ((frame["at"] - START).dt.total_seconds() // WINDOW_S).astype(int)
    return frame


def test_a_slowing_host_drifts_and_a_steady_one_is_stable(warehouse):
    rows = _rows(warehouse, "long")
    assert not rows.duplicated(["metric", "side", "host", "subject"]).any()  # the grain is a key
    assert len(rows) == 3 * 4  # 4 metrics x (app1, app2, *) on the server side; no client, no jstat here
    rows = rows.set_index(["side", "host", "metric"])
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
            middles_h = (np.arange(len(values)) * WINDOW_S + WINDOW_S / 2) / 3600
            slope, low, high, r2 = drift_fit(middles_h, values, scale)
            row = rows.loc[("server", host, metric)]
            assert row["windows"] == 10
            assert row["slope_pct_per_h"] == pytest.approx(slope, abs=1e-6)
            assert row["ci_low_pct_per_h"] == pytest.approx(low, abs=1e-3)
            assert row["ci_high_pct_per_h"] == pytest.approx(high, abs=1e-3)
            assert row["r2"] == pytest.approx(r2, abs=1e-9)
            tolerance = THRESHOLDS[f"{metric}_drift_max_{'pp' if metric == 'error_rate' else 'pct'}_per_h"]
            assert row["verdict"] == drift_verdict(low, high, tolerance), (host, metric, low, high)
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


def _target_from(**given) -> TargetFrom:
    return TargetFrom(**{"campaign": "test", "share_of_max": 0.8, "side": "server", **given})


def test_the_target_is_a_share_of_the_load_of_the_highest_throughput_in_the_matching_series(warehouse):
    target = resolve_soak_target(warehouse, _target_from(run="plain"), {"message_size": 2048})
    # series message_size=2048 is windows 6-10 at 1-5 VUs; the most calls (5 x 24 per host) at iteration 10
    assert (target.run_id, target.series, target.max_iteration) == ("plain", "message_size=2048", 10)
    assert target.max_calls_per_s == pytest.approx(2 * _ramp_calls(9) / WINDOW_S)
    assert (target.max_load_level, target.value) == (5, 4)  # 0.8 x 5 VUs
    assert target.max_load == {"vus": 5, "message_size": 2048}
    # latest: the newest run with a measured maximum that is no soak (the soaks here start at the same time)
    assert resolve_soak_target(warehouse, _target_from(), {"message_size": 1024}).run_id == "plain"


def test_no_matching_run_or_series_is_a_clear_error(warehouse):
    with pytest.raises(SoakTargetError, match=r"no run of campaign 'nope', its latest run, with a measured maximum "
                                              r"on the server side"):
        resolve_soak_target(warehouse, _target_from(campaign="nope"), {})
    with pytest.raises(SoakTargetError, match=r"run plain has 2 capacity series \('message_size=1024', "
                                              r"'message_size=2048'\) and 0 match the soak's step"):
        resolve_soak_target(warehouse, _target_from(run="plain"), {"message_size": 512})


def test_a_soak_without_its_earlier_run_fails_before_the_stage_is_touched(warehouse, tmp_path):
    from tasks.campaign.run import open_run
    from tasks.campaign.spec import CampaignError

    scenario = Path(__file__).parents[4] / "campaigns" / "scenarios" / "soak-share-of-peak.yaml"
    with pytest.raises(CampaignError, match="soak-share-of-peak.yaml: load.target_from: no run of campaign 'demo', "
                                            "scenario 'ramp-vus'"):
        open_run(scenario, tmp_path / "work", resolve_target=partial(resolve_soak_target, warehouse))
    assert not (tmp_path / "work").exists()  # no bundle folder: nothing was started
