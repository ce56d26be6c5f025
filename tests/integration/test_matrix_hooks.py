"""A matrix campaign with stage hooks on the demo stage: real JVMs, real k6, through the Prefect flow.

One run (module scope) of campaigns/scenarios/scale-between-steps.yaml scaled down to a 2 x 2 matrix
(adapters x message_size) with a 2-step vus ramp per series: its before_step hooks give each echo service
`adapters` worker threads and a 20 ms delay per call (POST /admin/settings), its after_step hooks read the
settings back. Capacity rows, hook records and per-step figures are checked against k6's raw points. A
second, short run of the demo campaign has a hook that fails.
"""

from __future__ import annotations

import gzip
import html
import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml

from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy

pytestmark = pytest.mark.integration
SCENARIO = Path(__file__).parents[2] / "campaigns" / "scenarios" / "scale-between-steps.yaml"
MATRIX = {"adapters": [1, 2], "message_size": [64, 4096]}


def _flow(tmp_path: Path, settings: dict, extra: dict, base: Path | None = None):
    from flows.campaign import RunOverrides, campaign_flow

    ports = free_ports(2)
    campaign = campaign_copy(tmp_path, {"workdir": str(tmp_path / "stage"), "store.uri": str(tmp_path / "store"),
                                        "requirements": [], **settings}, base=base)  # no series stops early
    chosen = RunOverrides(duration_s=2, pause_s=0, extra={"vars.port_app1": str(ports[0]),
                                                          "vars.port_app2": str(ports[1]), **extra})
    return campaign_flow(str(campaign), chosen, str(tmp_path / "w.duckdb"), str(tmp_path / "work")), ports


@pytest.fixture(scope="module")
def matrix_run(prefect_server, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("matrix")
    # message_size is a key the shipped file does not use, so it goes into the copy: a run may not add step keys
    run_id, _ = _flow(tmp_path, {"load.matrix": MATRIX}, {"load.ramp.max_steps": 2}, base=SCENARIO)
    (bundle,) = (tmp_path / "store").iterdir()
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        capacity = con.execute("select * from capacity where run_id = $r", {"r": run_id}).df()
        hooks = con.execute("select * from iteration_hooks where run_id = $r order by hook_number", {"r": run_id}).df()
    return run_id, bundle, manifest, capacity, hooks


def _client_steps(bundle: Path, manifest: dict) -> pd.DataFrame:
    """Per iteration from k6's raw points (one file per iteration): calls/s and avg ms, and the step's keys."""
    files = {s["iteration"]: bundle / s["path"] for s in manifest["sources"] if s["kind"] == "k6_json"}
    rows = []
    for it in manifest["iterations"]:
        with gzip.open(files[it["index"]], "rt") as lines:
            points = [json.loads(line) for line in lines]
        durations = [p["data"]["value"] for p in points if p.get("metric") == "http_req_duration" and p["type"] == "Point"]
        seconds = (pd.Timestamp(it["end"]) - pd.Timestamp(it["start"])).total_seconds()
        rows.append({"iteration": it["index"], **it["load"], "calls_per_s": len(durations) / seconds,
                     "avg_ms": sum(durations) / len(durations)})
    return pd.DataFrame(rows)


def _expected_capacity(steps: pd.DataFrame) -> dict[str, dict]:
    """Per client series from k6's raw steps: saturated (vus 2 -> 4 is +100 % load; min_scaling 0.5), the knee
    (the last step that scaled: the first one) and the highest throughput with its iteration."""
    expected = {}
    for (adapters, size), group in steps.groupby(["adapters", "message_size"]):
        best = group.loc[group["calls_per_s"].idxmax()]
        low, high = group.sort_values("vus")["calls_per_s"]
        saturated = high / low - 1 < 0.5 * (4 / 2 - 1)
        knee = group.loc[group["iteration"].idxmin()] if saturated else None
        expected[f"adapters={adapters} message_size={size}"] = {
            "saturated": saturated, "knee_iteration": None if knee is None else int(knee["iteration"]),
            "knee_calls_per_s": None if knee is None else knee["calls_per_s"], "points": list(group["iteration"]),
            "max_iteration": int(best["iteration"]), "max_calls_per_s": best["calls_per_s"]}
    return expected


def _text(cell: str) -> str:
    """An HTML cell's text: tags (a verdict's colour, a heading's <wbr>) dropped, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()


def _series_table(report: str) -> list[dict[str, str]]:
    """The report's capacity table of series (the one with a verdict column): a dict per row, heading -> text."""
    section = report.split('id="capacity"')[1].split("</section>")[0]
    for table in re.findall(r"<table>(.*?)</table>", section, re.S):
        headings = [_text(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
        if "verdict" in headings:
            return [dict(zip(headings, map(_text, re.findall(r"<td[^>]*>(.*?)</td>", row))))
                    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1])]
    raise AssertionError("no series table in the capacity section")


def _shown(cell: str, value: float) -> bool:
    """A number as the report writes it (thousands commas, its decimals) is `value` rounded to those decimals."""
    decimals = len(cell.split(".")[1]) if "." in cell else 0
    return abs(float(cell.replace(",", "")) - value) <= 0.5 * 10 ** -decimals + 1e-9


def test_a_2x2_matrix_gives_four_series_each_with_its_ramp(matrix_run):
    run_id, bundle, manifest, capacity, _ = matrix_run
    loads = [(it["load"]["adapters"], it["load"]["message_size"], it["load"]["vus"]) for it in manifest["iterations"]]
    assert loads == [(1, 64, 2), (1, 64, 4), (1, 4096, 2), (1, 4096, 4),
                     (2, 64, 2), (2, 64, 4), (2, 4096, 2), (2, 4096, 4)]
    client = capacity[capacity["side"] == "client"].set_index("series")
    assert sorted(client.index) == ["adapters=1 message_size=4096", "adapters=1 message_size=64",
                                    "adapters=2 message_size=4096", "adapters=2 message_size=64"]
    assert sorted(capacity["side"].unique()) == ["client", "server"] and len(capacity) == 8
    for series, want in _expected_capacity(_client_steps(bundle, manifest)).items():
        row = client.loc[series]
        assert row["max_iteration"] == want["max_iteration"]
        assert row["max_calls_per_s"] == pytest.approx(want["max_calls_per_s"], rel=1e-6)
        assert [p["iteration"] for p in row["points"]] == want["points"]
        assert bool(row["saturated"]) == want["saturated"]
        assert (row["knee_iteration"] == want["knee_iteration"]) if want["saturated"] else pd.isna(row["knee_iteration"])


def test_the_hooks_are_recorded_and_their_effect_shows_in_the_steps(matrix_run):
    run_id, bundle, manifest, _, hooks = matrix_run
    assert manifest["status"] == "completed"
    assert len(manifest["hooks"]) == 8 * 4 and all(h["exit_code"] == 0 for h in manifest["hooks"])
    for it in manifest["iterations"]:  # before: set on both services; after: read back from both
        mine = [h for h in manifest["hooks"] if h["iteration"] == it["index"]]
        assert [(h["when"], h["host"]) for h in mine] == [("before", "app1"), ("before", "app2"),
                                                          ("after", "app1"), ("after", "app2")]
        settings = f"workers={it['load']['adapters']} delay_ms=20\n"
        assert all((bundle / h["output"]).read_text() == settings == h["output_tail"] for h in mine)
        assert f"-d workers={it['load']['adapters']} -d delay_ms=20 " in mine[0]["command"]
    assert list(hooks["phase"]) == [h["when"] for h in manifest["hooks"]] and hooks["passed"].all()
    # every call waited the 20 ms delay; one worker per service (2 in all) serves 4 VUs at most about half
    # as fast as two workers per service, and each call then queues behind another
    steps = _client_steps(bundle, manifest).set_index(["adapters", "message_size", "vus"])
    assert (steps["avg_ms"] >= 20).all()
    for size in MATRIX["message_size"]:
        one, two = steps.loc[(1, size, 4)], steps.loc[(2, size, 4)]
        assert two["calls_per_s"] > 1.4 * one["calls_per_s"] and one["avg_ms"] > 1.4 * two["avg_ms"]
    with duckdb.connect(str(bundle.parents[1] / "w.duckdb"), read_only=True) as con:
        avg = dict(con.execute("select iteration, avg_ms from iteration_summary where run_id = $r and side = 'client'",
                               {"r": run_id}).fetchall())
    assert [round(avg[i], 3) for i in steps["iteration"]] == [round(v, 3) for v in steps["avg_ms"]]


def test_show_and_the_report_print_the_matrix_and_the_hooks(matrix_run):
    run_id, bundle, manifest, _, _ = matrix_run
    out = subprocess.run([str(Path(sys.executable).parent / "perfcampaign"), "show", run_id,
                          "--warehouse", str(bundle.parents[1] / "w.duckdb")], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    title = lines.index(f"{run_id}: client calls/s (p95 ms) by load level and series adapters/message_size; * the knee")
    assert lines[title + 1].split() == ["load", "1/64", "1/4096", "2/64", "2/4096"]
    assert [line.split()[0] for line in lines[title + 2:title + 4]] == ["2", "4"]
    assert max(len(line.rstrip()) for line in lines[title + 1:title + 4]) <= 80  # fits a terminal
    # capacity.instance_key adapters: each step's client calls/s divided by its adapters, and its failure ratio
    per_instance = lines.index(
        f"{run_id}: client calls/s per instance (failure %) by load level and series adapters/message_size")
    assert lines[per_instance + 1].split() == ["load", "1/64", "1/4096", "2/64", "2/4096"]
    with duckdb.connect(str(bundle.parents[1] / "w.duckdb"), read_only=True) as con:
        steps = con.execute("select iteration, load ->> 'adapters', calls_per_s, calls_per_s_per_instance from "
                            "iteration_summary join iterations using (run_id, iteration) where run_id = $r and "
                            "side = 'client'", {"r": run_id}).fetchall()
    assert all(per == pytest.approx(calls / int(adapters)) for _, adapters, calls, per in steps)
    assert f"{run_id}: stage hooks per iteration (exit status, seconds)" in [line.rstrip() for line in lines]
    report = (bundle / "report" / "report.html").read_text()  # built by the flow
    assert "<h3>Stage hooks</h3>" in report and report.count("/admin/settings</td>") == 32
    # the capacity section: a row per side and series, the series in the order of their values (64 before 4096)
    rows = _series_table(report)
    assert [r["side"] for r in rows] == ["client"] * 4 + ["server"] * 4
    expected = _expected_capacity(_client_steps(bundle, manifest))
    assert [r["series"] for r in rows[:4]] == list(expected) == [r["series"] for r in rows[4:]]
    for row, want in zip(rows, expected.values()):  # the client rows against k6's raw points
        assert row["verdict"] == ("saturated" if want["saturated"] else "scales")
        assert row["at it"] == str(want["max_iteration"]) and _shown(row["highest calls/s"], want["max_calls_per_s"])
        if want["saturated"]:
            assert row["knee it"] == str(want["knee_iteration"])
            assert _shown(row["knee calls/s"], want["knee_calls_per_s"])
        else:
            assert row["knee it"] == row["knee calls/s"] == ""


def test_a_failing_hook_fails_the_run_and_the_stage_is_torn_down(prefect_server, tmp_path):
    failing = {"before_step": [{"run": "echo {{iteration}} is too many; exit 3", "role": "sut"}]}
    with pytest.raises(Exception, match="before_step hook 0 on app1 for iteration 1 exited with 3"):
        _flow(tmp_path, failing, {"load.ramp.max_steps": 3})
    (bundle,) = (tmp_path / "store").iterdir()
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    assert manifest["status"] == "failed" and "exited with 3" in manifest["status_reason"]
    assert manifest["iterations"] == []  # stopped before any load; app2's hook never ran
    assert [(h["iteration"], h["host"], h["exit_code"]) for h in manifest["hooks"]] == [(1, "app1", 3)]
    assert (bundle / manifest["hooks"][0]["output"]).read_text() == "1 is too many\n"
    assert not (tmp_path / "stage" / manifest["run_id"]).exists()  # torn down
    out = subprocess.run(["pgrep", "-af", "EchoService"], capture_output=True, text=True)
    assert str(tmp_path) not in out.stdout
