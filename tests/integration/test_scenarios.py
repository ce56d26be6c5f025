"""Every shipped scenario (campaigns/scenarios/*.yaml) runs on the demo stage, scaled down with the `--set`
overrides docs/scenarios.md gives, through the Prefect flow with real JVMs and real k6, and produces its
report; its key figures are checked against the raw files of its bundle.

To add a scenario: its file, a section in docs/scenarios.md, and one entry in SCENARIOS below: the
overrides of each run (most scenarios run once; a before/after comparison twice) and a check that gets the
runs. A scenario file without an entry fails `test_every_scenario_has_an_entry`, so none is forgotten.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.independent import measured_iterations
from tests.integration.test_campaign_local import _query, _run

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
SCENARIO_DIR = REPO / "campaigns" / "scenarios"
DOCS = REPO / "docs" / "scenarios.md"
ACCESS_LINE = re.compile(r'\[(?P<time>[^\]]+)\] "(?P<method>\S+) (?P<path>[^ ?"]+)[^"]*" (?P<status>\d+) \S+ (?P<us>\d+)')


@dataclass
class Run:
    """One run of a scenario: its folder (store/, w.duckdb), id and manifest."""

    tmp_path: Path
    run_id: str
    manifest: dict

    def path(self, relative: str) -> Path:
        return self.tmp_path / "store" / self.run_id / relative

    def sources(self, kind: str) -> list[dict]:
        return [s for s in self.manifest["sources"] if s["kind"] == kind]

    def windows(self) -> dict[int, tuple[datetime, datetime]]:
        """iteration -> (first moment after its warm-up, end)."""
        return {it["index"]: (datetime.fromisoformat(it["start"]) + timedelta(seconds=it.get("warmup_s", 0)),
                              datetime.fromisoformat(it["end"])) for it in self.manifest["iterations"]}

    def query(self, sql: str) -> list[tuple]:
        return _query(self.tmp_path, sql.replace("$run", f"'{self.run_id}'"))

    def access_log(self) -> pd.DataFrame:
        """Every logged call: host, path, status, elapsed ms, logged time, and its iteration after warm-up,
        NaN in a warm-up or outside every window. By the placement rule (docs/warehouse.md): a whole-second
        stamp t stands for [t, t + 1 s) (tests/independent.py: measured_iterations)."""
        rows = []
        for source in self.sources("access_log"):
            for line in self.path(source["path"]).read_text().splitlines():
                match = ACCESS_LINE.search(line)
                at = pd.Timestamp(datetime.strptime(match["time"], "%d/%b/%Y:%H:%M:%S %z")).tz_convert("UTC")
                rows.append((source["host"], match["path"], int(match["status"]), int(match["us"]) / 1000, at))
        frame = pd.DataFrame(rows, columns=["host", "path", "status", "ms", "at"])
        frame["iteration"] = measured_iterations(frame.rename(columns={"at": "started_at"}),
                                                 self.manifest["iterations"], resolution_s=1)
        return frame

    def k6_points(self, metric: str, background: bool = False) -> pd.DataFrame:
        """A k6 metric's points of the tested load (or of the background load): iteration, time, value, tags."""
        rows = []
        for source in self.sources("k6_json"):
            if bool(source.get("declared_rate_per_s")) != background:
                continue
            with gzip.open(self.path(source["path"]), "rt") as lines:
                for point in map(json.loads, lines):
                    if point.get("type") == "Point" and point.get("metric") == metric:
                        data = point["data"]
                        rows.append((source.get("iteration"), datetime.fromisoformat(data["time"]), data["value"],
                                     data.get("tags") or {}))
        return pd.DataFrame(rows, columns=["iteration", "at", "value", "tags"])

    def vmstat_times(self, host: str) -> list[datetime]:
        """The times of a host's vmstat -t samples (UTC), without the first one (the average since boot)."""
        (source,) = [s for s in self.sources("vmstat") if s["host"] == host]
        times = [datetime.strptime(" ".join(line.split()[-2:]), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
                 for line in self.path(source["path"]).read_text().splitlines() if line.strip()[:1].isdigit()]
        return times[1:]


@dataclass
class Scenario:
    """How the harness scales a scenario down (one overrides dict per run) and what it checks."""

    runs: list[dict]
    check: Callable[[list[Run]], None] | None = None
    # a scenario whose own test module runs it (with more checks than a harness run would add): not run twice
    covered_by: str | None = None


def check_report_and_warm_up(run: Run) -> None:
    """What every scenario run must show: completed, a report, and host figures without the warm-up."""
    assert run.manifest["status"] == "completed", run.manifest.get("status_reason")
    assert (run.path("report") / "report.html").is_file()
    windows = run.windows()
    assert all(it["warmup_s"] > 0 for it in run.manifest["iterations"])
    samples = dict(run.query("select iteration, samples from host_iteration_stats where run_id = $run and host = 'app1'"))
    times = run.vmstat_times("app1")
    assert samples == {i: sum(start <= t < end for t in times) for i, (start, end) in windows.items()}


def check_pull_requirements(runs: list[Run]) -> None:
    """Judged at the stated rate only, on the pull operation only, against the raw access logs and k6 points."""
    (run,) = runs
    check_report_and_warm_up(run)
    stated = next(i for i, it in enumerate(run.manifest["iterations"], 1) if it["load"]["rate_per_s"] == 20)
    verdicts = {(r, i): (m, judged_by) for r, i, m, judged_by in run.query(
        "select requirement_id, iteration, measured, coalesce(passed::varchar, judged_by) from verdicts "
        "where run_id = $run")}
    calls = run.access_log()
    pull = calls[(calls["iteration"] == stated) & (calls["path"] == "/echo")]["ms"]
    assert verdicts[("pull-avg", stated)][0] == pytest.approx(pull.mean())
    assert verdicts[("pull-p95", stated)][0] == pytest.approx(np.percentile(pull, 95))
    assert verdicts[("pull-p99", stated)][0] == pytest.approx(np.percentile(pull, 99))
    for other in set(run.windows()) - {stated}:
        assert verdicts[("pull-avg", other)][1] == "load is not rate_per_s=20"  # measured, not judged
    durations = run.k6_points("http_req_duration")
    start, _ = run.windows()[stated]
    durations["started"] = durations["at"] - pd.to_timedelta(durations["value"], unit="ms")
    kept = durations[(durations["iteration"] == stated) & (durations["started"] >= start)]
    app1 = kept[kept["tags"].map(lambda t: t.get("name", "").startswith("app1 POST"))]["value"]
    assert verdicts[("pull-app1-p95", stated)][0] == pytest.approx(np.percentile(app1, 95))
    failed = run.k6_points("http_req_failed")
    failed = failed[(failed["iteration"] == stated) & (failed["at"] >= start)]
    dropped = run.k6_points("dropped_iterations")
    lost = dropped[(dropped["iteration"] == stated) & (dropped["at"] >= start)]["value"].sum()
    # k6 writes http_req_failed when a call ends: a call started in the warm-up and ended after it is one of
    # the calls left out, so count the calls the warehouse kept (started after the warm-up) and their failures
    assert len(failed) >= len(kept)
    errors = failed[failed["value"] > 0]
    assert verdicts[("pull-delivered", stated)][0] == pytest.approx((len(errors) + lost) / (len(kept) + lost))
    # the report's offered-against-achieved table (docs/scenarios.md): the planned rate, the calls made, the
    # dropped ones, error_rate_with_dropped in %, as its headings say
    page = (run.path("report") / "report.html").read_text()
    offered = page.split("<h3>Offered against achieved load</h3>")[1].split("</table>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in offered.split("<tr")[2:]]
    (client,) = [row for row in rows if row[0] == str(stated) and row[2] == "client"]
    seconds = (run.windows()[stated][1] - start).total_seconds()
    assert client[3:] == ["20.0", f"{len(kept) / seconds:.1f}", f"{100 * len(kept) / (len(kept) + lost):.2f}",
                          f"{int(lost):,}", f"{100 * len(errors) / len(kept):.2f}",
                          f"{100 * (len(errors) + lost) / (len(kept) + lost):.2f}"]
    check_expectation_and_slow_calls(run, stated, pull)


def check_expectation_and_slow_calls(run: Run, stated: int, pull: pd.Series) -> None:
    """pull-p95's expectation judged beside its spec, its slow calls at its own threshold (every pull is held
    20 ms: all of them), the rate requirement worded in %, and JUnit's skip reason the verdicts' own."""
    ((expect, met, slow, slow_ms),) = run.query(
        "select expect, expect_passed, slow_calls, slow_call_ms from verdicts "
        f"where run_id = $run and requirement_id = 'pull-p95' and iteration = {stated}")
    assert (expect, met) == (1000, bool(np.percentile(pull, 95) < 1000))
    assert (slow, slow_ms) == (int((pull >= 20).sum()), 20) and slow > 0
    (sentence,) = run.query("select sentence from conclusions where run_id = $run and subject = 'pull-delivered'")[0]
    assert "limit < 1 %" in sentence and " ms" not in sentence.split("limit")[1]
    junit = ET.parse(run.path("report") / "junit.xml").getroot()
    skipped = {case.find("skipped").get("message") for case in junit.iter("testcase")
               if case.get("classname").endswith(".pull-avg") and case.find("skipped") is not None}
    assert skipped == {"not judged: load is not rate_per_s=20"}


def check_step_ramp(runs: list[Run]) -> None:
    """nodes x threads VUs per step, the knee where the stop rule put it, the background load kept apart."""
    (run,) = runs
    check_report_and_warm_up(run)
    vus = run.k6_points("vus")
    for it in run.manifest["iterations"]:
        load = it["load"]
        assert vus[vus["iteration"] == it["index"]]["value"].max() == load["nodes"] * load["threads"]
    reason = run.manifest["status_reason"]
    knees = dict(run.query("select side, knee_iteration from capacity where run_id = $run"))
    assert set(knees) == {"client", "server"}  # the background load forms no knee
    if match := re.search(r"saturated at step (\d+)", reason):
        assert knees["client"] == int(match[1]) - 1, reason  # one definition of saturated
    else:
        assert "all steps run" in reason
    calls = run.access_log()
    measured = dict(run.query("select iteration, measured from verdicts where run_id = $run "
                              "and requirement_id = 'echo-p95' and iteration is not null"))
    for index in run.windows():
        echo = calls[(calls["iteration"] == index) & (calls["path"] == "/echo")]["ms"]
        assert (calls[(calls["iteration"] == index)]["path"] == "/health").sum() > 0  # the background ran
        assert measured[index] == pytest.approx(np.percentile(echo, 95))
    # side background: the background load's own calls and every call matching its background_labels
    # ('*/health') on any side, so also the servers' logged /health calls (docs/warehouse.md, `requests`)
    background = dict(run.query("select iteration, calls from iteration_summary where run_id = $run "
                                "and side = 'background'"))
    points = run.k6_points("http_req_duration", background=True)
    started = points["at"] - pd.to_timedelta(points["value"], unit="ms")
    own = {i: int(((started >= start) & (started < end)).sum()) for i, (start, end) in run.windows().items()}
    logged = {i: int(((calls["iteration"] == i) & (calls["path"] == "/health")).sum()) for i in run.windows()}
    assert all(own.values()) and all(logged.values())
    assert background == {i: own[i] + logged[i] for i in run.windows()}


def check_matrix(runs: list[Run]) -> None:
    """Every (size, vus) pair run once, in order; one capacity row per size and side, its maximum the best
    iteration of that size by the calls counted from the raw k6 points."""
    (run,) = runs
    check_report_and_warm_up(run)
    loads = [(it["load"]["message_size"], it["load"]["vus"]) for it in run.manifest["iterations"]]
    assert loads == [(64, 1), (64, 2), (4096, 1), (4096, 2)]
    # each step's k6 file is pinned to its iteration: every call in it counts there, but those that started in
    # the warm-up (a window's end is its last call's end, written to the millisecond: a call can start after it)
    durations = run.k6_points("http_req_duration")
    durations["started"] = durations["at"] - pd.to_timedelta(durations["value"], unit="ms")
    calls = {index: int(((durations["iteration"] == index) & (durations["started"] >= start)).sum())
             for index, (start, _) in run.windows().items()}
    summary = dict(run.query("select iteration, calls from iteration_summary where run_id = $run and side = 'client'"))
    assert summary == calls
    best = dict(run.query("select series, max_iteration from capacity where run_id = $run and side = 'client'"))
    rates = {index: calls[index] / (end - start).total_seconds() for index, (start, end) in run.windows().items()}
    assert best == {"message_size=64": max((1, 2), key=rates.get), "message_size=4096": max((3, 4), key=rates.get)}


def _compare(run_a: Run, run_b: Run) -> list[dict]:
    """`perfcampaign compare A B --only requirements --format json`, as a user runs it."""
    cli = Path(sys.executable).parent / "perfcampaign"
    done = subprocess.run([str(cli), "compare", run_a.run_id, run_b.run_id, "--only", "requirements", "--format",
                           "json", "-w", str(run_a.tmp_path / "w.duckdb")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # with --only: the one table's rows


DELAY_MS = 30  # the "new build" of before-after-operations: vars.delay_ms below


def check_before_after(runs: list[Run]) -> None:
    """Per-operation requirements on the raw k6 points; compare finds write-large slower, by its own test.

    How much slower depends on how busy the machine is, so the test asserts what the raw points determine:
    the service sleeps DELAY_MS in every delayed call, so each one took at least that long, and the p95 after
    is above the p95 before by the delay minus the noise of the undelayed part of a call (the p95 before less
    the quickest call before, all measured on the raw points)."""
    before, after = runs
    write_large = {}
    for run in runs:
        check_report_and_warm_up(run)
        durations = run.k6_points("http_req_duration")
        durations["started"] = durations["at"] - pd.to_timedelta(durations["value"], unit="ms")
        measured = {(r, i): m for r, i, m in run.query(
            "select requirement_id, iteration, measured from verdicts where run_id = $run and iteration is not null")}
        for index, (start, _) in run.windows().items():
            kept = durations[(durations["iteration"] == index) & (durations["started"] >= start)]
            for operation in ("read-small", "write-large", "health"):
                values = kept[kept["tags"].map(lambda t: t.get("name")) == operation]["value"]
                assert measured[(f"{operation}-p95", index)] == pytest.approx(np.percentile(values, 95))
                if operation == "write-large":
                    write_large[run.run_id] = values.to_numpy()
    rows = {row["requirement_id"]: row for row in _compare(before, after)}
    slower = rows["write-large-p95"]
    old, new = write_large[before.run_id], write_large[after.run_id]
    assert slower["before"] == pytest.approx(np.percentile(old, 95))
    assert slower["after"] == pytest.approx(np.percentile(new, 95))
    assert new.min() >= DELAY_MS  # every delayed call slept the delay
    noise = np.percentile(old, 95) - old.min()
    assert slower["after"] - slower["before"] >= DELAY_MS - noise, (slower, noise)
    # beyond noise by compare's own test; certain when even the quickest call after is slower than the p95 before
    assert slower["verdict"] == "WORSE" or new.min() <= np.percentile(old, 95), slower
    assert slower["verdict"] in ("WORSE", "same")
    assert slower["requirement"] == "client p95_ms < 500 (label write-large)"
    assert rows["errors-under-1pct"]["verdict"] in ("same", "untested")


SCENARIOS: dict[str, Scenario] = {
    "pull-requirements-at-rate.yaml": Scenario(
        runs=[{"load.duration_s": 4, "load.pause_s": 1, "load.warmup_s": 1,
               "load.steps": [{"rate_per_s": 10, "max_vus": 10}, {"rate_per_s": 20, "max_vus": 10}]}],
        check=check_pull_requirements),
    "step-ramp-nodes-threads.yaml": Scenario(
        runs=[{"load.duration_s": 3, "load.pause_s": 0.5, "load.warmup_s": 1,
               "load.steps": [{"nodes": 1, "threads": 1}, {"nodes": 1, "threads": 2}]}],
        check=check_step_ramp),
    "before-after-operations.yaml": Scenario(
        # 4 VUs for 3 s after the warm-up: enough calls of each operation (200) for compare to test a p95
        runs=[{"load.duration_s": 4, "load.pause_s": 0.5, "load.warmup_s": 1, "load.steps": [{"vus": 4}]},
              {"load.duration_s": 4, "load.pause_s": 0.5, "load.warmup_s": 1, "load.steps": [{"vus": 4}],
               "vars.delay_ms": str(DELAY_MS), "vars.sut_version": "1.0.1"}],
        check=check_before_after),
    "user-payload-matrix.yaml": Scenario(
        runs=[{"load.duration_s": 3, "load.pause_s": 0, "load.warmup_s": 1,
               "load.matrix": {"message_size": [64, 4096], "vus": [1, 2]}}],
        check=check_matrix),
    "scale-between-steps.yaml": Scenario(runs=[], covered_by="tests/integration/test_matrix_hooks.py"),
    "soak-share-of-peak.yaml": Scenario(runs=[], covered_by="tests/integration/test_soak.py"),
    "demo-jmeter.yaml": Scenario(runs=[], covered_by="tests/integration/test_jmeter.py"),
}


def _scenario_files() -> list[str]:
    return sorted(path.name for path in SCENARIO_DIR.glob("*.yaml"))


def test_every_scenario_has_an_entry_and_a_section():
    files = _scenario_files()
    assert files, SCENARIO_DIR
    assert sorted(SCENARIOS) == files, "each campaigns/scenarios file needs one SCENARIOS entry, and no more"
    sections = re.findall(r"^## `([^`]+\.yaml)`", DOCS.read_text(), flags=re.M)
    assert sorted(sections) == files, "each scenario needs one section `## \\`FILE.yaml\\`` in docs/scenarios.md"
    for name, scenario in SCENARIOS.items():
        if scenario.covered_by:  # its module runs the shipped file itself
            assert f'"{name}"' in (REPO / scenario.covered_by).read_text(), (name, scenario.covered_by)


@pytest.mark.parametrize("name", [name for name, scenario in SCENARIOS.items() if not scenario.covered_by])
def test_a_scenario_runs_scaled_down_and_its_report_holds_its_figures(prefect_server, tmp_path, name):
    scenario = SCENARIOS[name]
    runs = []
    for overrides in scenario.runs:
        run_id, _ = _run(tmp_path, overrides, campaign=SCENARIO_DIR / name)
        manifest = yaml.safe_load((tmp_path / "store" / run_id / "run.yaml").read_text())
        runs.append(Run(tmp_path, run_id, manifest))
    scenario.check(runs)
