"""The report puts the data checks first: a failed validation is never presented as a pass, and a
corrected clock is said."""

from __future__ import annotations

import tests.validation_runs as runs
from tasks.report.data import load_report_data
from tasks.report.summary import overall_verdict, summary_sentences
from tasks.validate.run import validate_run
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle


def _report(tmp_path, bundle, run_id):
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(bundle, warehouse, progress=lambda m: None)
    summary = validate_run(warehouse, run_id, tmp_path / "out")
    with open_warehouse(warehouse) as con:
        return summary, load_report_data(con, run_id, compare=False)


def test_a_corrected_clock_is_said_and_the_run_still_passes(tmp_path):
    summary, data = _report(tmp_path, runs.write_run(tmp_path / "b", "skew", skews={"app1": 30.0}), "skew")
    assert summary.success and overall_verdict(data) != "DATA FAILED"
    said = [s for s in summary_sentences(data) if s.startswith("The clock of app1")]
    assert len(said) == 1 and "+30.0 s off" in said[0] and "corrected time" in said[0]


def test_failed_expectations_are_named_and_nothing_passes(tmp_path):
    stop = runs.window(2)[0] + 5  # app2's log ends 5 s into iteration 2
    log = runs.access_log([r for r in runs.plan() if r.host == "app1" or r.t < stop], "app2")
    bundle = runs.write_run(tmp_path / "b", "stops", logs={"app2": log})
    summary, data = _report(tmp_path, bundle, "stops")
    assert not summary.success
    assert overall_verdict(data) == "DATA FAILED"
    first = summary_sentences(data)[0]
    assert first.startswith("The data of this run failed") and "not a pass" in first
    for name in data.validation["failed_expectations"]:
        assert name in first
