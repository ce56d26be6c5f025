"""The report files of the fixture runs: the HTML says the expected sentences and numbers, JUnit, JSON, Markdown."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tasks.cli.report import report_location
from tasks.report.build import build_report, latest_report, publish_run_report
from tasks.store.base import StoreConfig
from tasks.warehouse.connection import open_warehouse

CLI = str(Path(sys.executable).parent / "perfcampaign")


@pytest.fixture(scope="module")
def broken(report_warehouse, tmp_path_factory):
    """The report of broken-1, compared by default with pass-1 (the previous passing run of campaign shop)."""
    return build_report(report_warehouse, "broken-1", tmp_path_factory.mktemp("broken-report"))


def test_html_is_self_contained_and_says_the_verdicts(broken):
    page = broken.path("html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "@media print" in page
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched from elsewhere
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 5  # minutes, load, cpu, jvm, containers
    assert all(base64.b64decode(image).startswith(b"\x89PNG") for image in images)
    assert '<span class="badge fail">FAIL</span>' in page
    margin = 100 * (250 - 400) / 250
    assert (f"avg-under-250: server avg 400.0 ms at 40.0 calls/s (iteration 4), limit &lt; 250 ms: does not hold at "
            f"iterations 3, 4 (margin {margin:.0f} %); holds up to iteration 2, 20.0 calls/s.") in page
    assert "limit &lt; 500 ms: holds at every judged iteration (1, 2, 3, 4), smallest margin 20 %; holds up to " \
           "iteration 4, 40.0 calls/s; expectation &lt; 200 ms missed at iterations 3, 4." in page
    assert "busy-only: not judged: the server side stayed under 1000 calls/s in every iteration." in page
    assert "Against the baseline pass-1, of 9 requirement checks at matching iterations: 1 now fails" in page
    assert "CPU of app was saturated in iteration 4" in page
    assert "300.0 ms" in page and "+2901.5 %" not in page.split("Against the baseline")[0]
    assert "percentiles interpolated between the two closest ranks (run.yaml percentile_method)" in page


def test_junit_has_one_testcase_per_requirement_and_iteration(broken):
    root = ET.fromstring(broken.path("junit").read_text())
    run_case, *cases = root.findall("./testsuite/testcase")
    assert (run_case.get("name"), run_case.find("failure")) == ("run verdict", None)  # a completed run
    assert len(cases) == 4 * 4 and root.get("tests") == "17"
    failed = [(c.get("classname"), c.get("name"), c.find("failure").get("type"))
              for c in cases if c.find("failure") is not None]
    # the spec of avg-under-250 breaks at 300 and 400 ms; p95-under-500 holds its spec there but misses its
    # expectation (< 200 ms), a failure of its own type
    assert failed == [("broken-1.avg-under-250", "iteration 3 (vus=30)", "RequirementBroken"),
                      ("broken-1.avg-under-250", "iteration 4 (vus=40)", "RequirementBroken"),
                      ("broken-1.p95-under-500", "iteration 3 (vus=30)", "ExpectationMissed"),
                      ("broken-1.p95-under-500", "iteration 4 (vus=40)", "ExpectationMissed")]
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == 4 and all(c.get("classname") == "broken-1.busy-only" for c in skipped)
    # the reason is the verdicts table's (judged_by), not a sentence of its own
    assert {c.find("skipped").get("message") for c in skipped} == {"not judged: under min_calls_per_s 1000"}
    assert (root.get("failures"), root.get("skipped")) == ("4", "4")
    assert cases[2].find("failure").get("message") == (
        "server avg_ms < 250: measured 300.0 ms at 30.0 calls/s (margin -20.0 %)")
    assert cases[14].find("failure").get("message") == (
        f"expectation missed: server p95_ms < 200: measured 300.0 ms at 30.0 calls/s (margin {100 * (200 - 300) / 200:.1f} %)")


def test_json_and_markdown_summaries(broken):
    data = json.loads(broken.path("json").read_text())
    assert (data["run_id"], data["verdict"], data["baseline"]) == ("broken-1", "FAIL", "pass-1")
    whole = {r["requirement_id"]: r for r in data["requirements"]}
    assert whole["avg-under-250"]["passed"] is False and whole["avg-under-250"]["holds_up_to_iteration"] == 2
    assert whole["busy-only"]["passed"] is None
    assert len(data["verdicts"]) == 16 and data["capacity"][0]["saturated"] is False
    assert any("does not hold at iterations 3, 4" in s for s in data["summary"])
    markdown = broken.path("markdown").read_text()
    assert markdown.startswith("# Report: `broken-1` — FAIL")
    # `<` is written `&lt;` in the Markdown (text from logs and labels never becomes HTML); it renders as `<`
    assert "| avg-under-250 | server avg_ms &lt; 250 | 400.0 ms | **BROKEN** | -60.0 % | iteration 2, 20.0 calls/s |" in markdown
    assert "| avg-under-250 @ iteration 2 (vus=20) | ms | server avg_ms &lt; 250 | no higher than before beyond noise " \
           "| 10.0 | 100.0 | +901.0 % | WORSE |" in markdown


def test_saturated_and_passing_runs(report_file, tmp_path):
    sat = build_report(report_file, "sat-1", tmp_path / "sat").path("html").read_text()
    assert ("Capacity, server side: throughput follows the load up to iteration 3 (vus=30, 30.0 calls/s) and no "
            "further; iteration 4 raised the load 33 % (vus=30 to vus=40) but throughput +1.7 %") in sat
    assert "No baseline: no earlier passing run" in sat  # the only run of campaign capacity
    passed = build_report(report_file, "pass-1", tmp_path / "pass", compare=False)
    assert '<span class="badge pass">pass</span>' in passed.path("html").read_text()
    root = ET.fromstring(passed.path("junit").read_text())
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("10", "0", "0")  # 9 + the run


def test_expectation_results_absent_or_present(report_file, tmp_path):
    copy = shutil.copyfile(report_file, tmp_path / "w.duckdb")
    with open_warehouse(copy, write=True) as con:
        con.execute("drop table if exists expectation_results")
    absent = build_report(copy, "pass-1", tmp_path / "absent", compare=False).path("html").read_text()
    assert "no expectation_results table: expectations were not run" in absent
    with open_warehouse(copy, write=True) as con:  # a file's writer makes the table again, empty
        con.execute("insert into expectation_results (run_id, suite, expectation, severity, success, observed) "
                    "values ('pass-1', 'requests', 'elapsed_ms >= 0', 'critical', true, '0 bad rows'), "
                    "('pass-1', 'requests', 'status in 100..599', 'warning', false, '3 bad rows')")
    present = build_report(copy, "pass-1", tmp_path / "present", compare=False,
                           validation_page="/srv/validation.html")
    page = present.path("html").read_text()
    assert "status in 100..599" in page and "3 bad rows" in page and 'href="file:///srv/validation.html"' in page
    assert "Data expectations: 1 of 2 met." in page


def test_published_next_to_the_bundle_and_linked_from_the_run(report_file, tmp_path):
    copy = shutil.copyfile(report_file, tmp_path / "w.duckdb")
    page = tmp_path / "elsewhere" / "validation.html"
    page.parent.mkdir()
    page.write_text("<!DOCTYPE html><title>validation</title>")
    with open_warehouse(copy, write=True) as con:  # the validation task's outcome, as tasks/validate/run.py records it
        con.execute("create table if not exists validations (run_id varchar, validated_at timestamptz, "
                    "success boolean, page_path varchar)")
        con.execute("insert into validations by name select 'sat-1' run_id, now() validated_at, true success, "
                    "$page page_path", {"page": str(page)})
    store = StoreConfig(uri=str(tmp_path / "store"))
    line = publish_run_report("sat-1", copy, store, tmp_path / "work")
    stored = tmp_path / "store" / "sat-1" / "report"
    assert line == f"Report: {(stored / 'report.html').as_uri()}"
    assert sorted(p.name for p in stored.iterdir()) == ["junit.xml", "report.html", "summary.json", "summary.md",
                                                        "validation.html"]
    assert 'Validation page: <a href="validation.html">' in (stored / "report.html").read_text()
    assert latest_report(copy, "sat-1") == (stored / "report.html").as_uri()
    assert report_location("sat-1", copy) == str(stored / "report.html")
    assert report_location("pass-1", copy).startswith("none yet")
    assert publish_run_report("no-such-run", copy, store, tmp_path / "work").startswith("Report NOT built")


def test_report_command(report_file, tmp_path):
    result = subprocess.run([CLI, "report", "cmp-b", "-w", str(report_file), "--out", str(tmp_path / "r")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str((tmp_path / "r" / "report.html").resolve())
    page = (tmp_path / "r" / "report.html").read_text()
    assert "Against the baseline cmp-a" in page and "WORSE" in page
    missing = subprocess.run([CLI, "report", "nope", "-w", str(report_file), "--out", str(tmp_path / "x")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "no run 'nope'" in missing.stderr


def test_report_command_publishes_next_to_the_bundle(report_file, tmp_path):
    from typer.testing import CliRunner

    from tasks.cli.main import app

    copy = shutil.copyfile(report_file, tmp_path / "w.duckdb")
    with open_warehouse(copy) as con:
        bundle_uri = con.execute("select bundle_uri from runs where run_id = 'pass-1'").fetchone()[0]
    result = CliRunner().invoke(app, ["report", "pass-1", "-w", str(copy), "--out", str(tmp_path / "out"),
                                      "--no-baseline", "--publish"])
    assert result.exit_code == 0, result.output
    stored = Path(bundle_uri.removeprefix("file://")) / "report" / "report.html"
    assert stored.is_file() and latest_report(copy, "pass-1") == stored.as_uri()


def test_baseline_named_by_label_option_or_missing(report_warehouse, tmp_path):
    from tasks.report.data import (
        ReportData,
        ReportError,
        _compare_with_baseline,
        load_report_data,
    )
    with open_warehouse(report_warehouse) as con:
        labelled = load_report_data(con, "cmp-same")  # the latest earlier passing run is cmp-b; its label says cmp-a
        assert labelled.baseline == "cmp-a" and labelled.requirement_changes[0].verdict == "same"
        with pytest.raises(ReportError, match="baseline 'ghost' is not in the warehouse"):
            load_report_data(con, "cmp-same", baseline="ghost")
        orphan = ReportData(run={"run_id": "cmp-same", "labels": {"baseline": "ghost"}})
        _compare_with_baseline(con, orphan, None)
    assert orphan.baseline is None and orphan.baseline_note == (
        "The run names the baseline ghost, which is not in the warehouse.")
