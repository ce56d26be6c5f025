"""Data expectations on fixture runs with known defects: each fails exactly where the defect is."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tasks.validate.run import (
    EXPECTATIONS_DIR,
    ValidationError,
    load_suites,
    validate_run,
)
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests import validation_runs as runs
from tests.lakeserver import new_lake, pg_server, s3_endpoint  # noqa: F401 - fixtures of the lake engine

SUITE_FILES = sorted(EXPECTATIONS_DIR.glob("*.json"))
EXPECTATION_COUNT = sum(len(json.loads(path.read_text())["expectations"]) for path in SUITE_FILES)


def _load(tmp_path, bundle, request=None):
    """The bundle ingested into a warehouse file, or into a new lake when the test's `engine` says "lake"."""
    engine = request.getfixturevalue("engine") if request else "file"
    warehouse = tmp_path / "w.duckdb" if engine == "file" else request.getfixturevalue("new_lake")("validate")
    ingest_bundle(bundle, warehouse, progress=lambda m: None)
    return warehouse


def _results(warehouse, run_id):
    with open_warehouse(warehouse) as con:
        rows = con.execute(
            "select suite, expectation, severity, success, observed, details::varchar from expectation_results "
            "where run_id = $run_id", {"run_id": run_id}).fetchall()
    return {(suite, name): (severity, success, observed, json.loads(details))
            for suite, name, severity, success, observed, details in rows}


def _failures(warehouse, run_id):
    return {key: value for key, value in _results(warehouse, run_id).items() if not value[1]}


def _unexpected(details, *columns):
    return sorted(tuple(row[c] for c in columns) for row in details["unexpected_rows"])


def test_every_suite_file_names_a_check_query_and_unique_expectation_ids():
    suites = load_suites()
    assert [s["name"] for s in suites] == [p.stem for p in SUITE_FILES]
    for suite in suites:
        ids = [e["meta"]["id"] for e in suite["expectations"]]
        assert len(ids) == len(set(ids)), suite["name"]
        assert (EXPECTATIONS_DIR.parent / "sql" / "checks" / f"{suite['meta']['check']}.sql").is_file()


@pytest.mark.parametrize("engine", ["file", "lake"])
def test_a_clean_run_passes_everything(tmp_path, request, engine):
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "clean"), request)
    summary = validate_run(warehouse, "clean", tmp_path / "out")
    assert summary.success and summary.evaluated == EXPECTATION_COUNT
    assert (summary.failed, summary.warnings) == ([], [])
    results = _results(warehouse, "clean")
    assert len(results) == EXPECTATION_COUNT and all(r[1] for r in results.values())
    # the figures behind them, counted from the plan
    assert results[("iteration_coverage", "every_host_every_iteration")][2] == "all 9 rows as expected"
    assert results[("k6_summary_checks", "summary_agrees_with_points")][2] == "all 9 rows as expected"
    assert results[("background_load", "ran_at_declared_rate")][2] == "no rows to check"
    with open_warehouse(warehouse) as con:
        row = con.execute("select success, evaluated_expectations, failed_expectations, warnings, page_path "
                          "from validations where run_id = 'clean'").fetchone()
    assert row == (True, EXPECTATION_COUNT, [], [], str(tmp_path / "out" / "validation.html"))
    page = (tmp_path / "out" / "validation.html").read_text()
    assert "The data passes its expectations" in page and "every_host_every_iteration" in page


def test_a_30_s_clock_skew_is_a_reported_warning_and_the_run_still_passes(tmp_path):
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "skew", skews={"app1": 30.0}))
    summary = validate_run(warehouse, "skew", tmp_path / "out")
    assert summary.success and summary.failed == []
    assert [w.split(":")[0] for w in summary.warnings] == ["clock_skew.clocks_agree"]
    severity, success, observed, details = _failures(warehouse, "skew")[("clock_skew", "clocks_agree")]
    assert severity == "warning" and "host=app1" in observed and "is_corrected=True" in observed
    assert _unexpected(details, "host") == [("app1",)]
    assert details["unexpected_rows"][0]["skew_s"] == pytest.approx(30.0, abs=0.05)
    assert details["kwargs"]["max_value"] == 2.0  # the manifest's default threshold, resolved
    # judged by corrected time, the skewed host's requests are inside the run
    assert _results(warehouse, "skew")[("requests", "inside_run")][1] is True
    page = (tmp_path / "out" / "validation.html").read_text()
    assert "clocks_agree" in page and "rows placed in iterations by written time - skew_s" in page


def test_a_last_line_cut_in_half_is_one_rejected_line_under_1_pct(tmp_path):
    requests = runs.plan()
    log = runs.access_log(requests, "app2")
    last = log.rstrip("\n").rsplit("\n", 1)[1]
    cut = log[: len(log) - len(last) // 2 - 1]  # the last line loses its second half and its newline
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "cut", logs={"app2": cut}))
    summary = validate_run(warehouse, "cut")
    assert summary.success
    served = sum(r.host == "app2" for r in requests)
    with open_warehouse(warehouse) as con:
        assert con.execute("select rows_loaded, rows_rejected from sources where path = 'app2/access.log'").fetchone() \
            == (served - 1, 1)
        assert con.execute("select count(*) from rejected_lines where path = 'app2/access.log'").fetchone()[0] == 1
    result = _results(warehouse, "cut")[("rejected_lines", "rejected_under_1_pct")]
    assert result[1] is True


def test_a_log_that_stops_half_way_fails_coverage_for_the_later_iterations(tmp_path):
    requests = runs.plan()
    stop = runs.window(2)[0] + 5
    log = runs.access_log([r for r in requests if r.host == "app1" or r.t < stop], "app2")
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "stops", logs={"app2": log}))
    summary = validate_run(warehouse, "stops")
    assert not summary.success
    failures = _failures(warehouse, "stops")
    assert list(failures) == [("iteration_coverage", "every_host_every_iteration")]
    severity, _, observed, details = failures[("iteration_coverage", "every_host_every_iteration")]
    assert severity == "critical"
    assert _unexpected(details, "iteration", "side", "host", "calls") == [(3, "server", "app2", 0)]
    assert observed.startswith("1 of 9 rows unexpected: iteration=3, side=server, host=app2")
    with open_warehouse(warehouse) as con:
        assert con.execute("select success, failed_expectations from validations").fetchone() \
            == (False, ["iteration_coverage.every_host_every_iteration"])


@pytest.mark.parametrize("engine", ["file", "lake"])
def test_host_metric_defects_fail_their_own_expectations_only(tmp_path, request, engine):
    bad_row = 20  # vmstat data row 20 (true second 15 after START) says us=70: the CPU columns sum past 100
    files = {
        "app1/vmstat-t.log": runs.vmstat_t(overrides={bad_row: 70}),
        "app2/vmstat-t.log": runs.vmstat_t(skip=(20, 30)),  # ten missing samples
        "app1/jstat.log": runs.jstat(lines=40, with_uptime=False, restart_at=25),
    }
    sources = [
        {"kind": "vmstat", "host": "app2", "path": "app2/vmstat-t.log"},
        {"kind": "jstat", "host": "app1", "path": "app1/jstat.log", "started_at": runs.START.isoformat(), "interval_s": 1},
    ]
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "hosts", files=files, sources=sources), request)
    summary = validate_run(warehouse, "hosts")
    assert not summary.success
    failures = _failures(warehouse, "hosts")
    assert sorted(failures) == [
        ("jstat_samples", "gc_time_never_decreases"),
        ("jstat_samples", "young_gc_count_never_decreases"),
        ("sample_intervals", "no_gaps"),
        ("vmstat_samples", "cpu_columns_sum_to_100"),
    ]
    true_us = runs.cpu_user(runs.START.timestamp() - 0.5 + runs.VMSTAT_FROM_S + bad_row)
    cpu = failures[("vmstat_samples", "cpu_columns_sum_to_100")][3]
    assert _unexpected(cpu, "host", "line_no", "cpu_total_pct") == [("app1", bad_row + 3, 70 + 5 + (93 - true_us) + 2)]
    # the restart: line 25 of the data (file line 27) counts from zero again
    young = failures[("jstat_samples", "young_gc_count_never_decreases")][3]
    assert _unexpected(young, "source_path", "line_no", "young_gc_count_change") == [("app1/jstat.log", 27, -(24 // 3))]
    gaps = failures[("sample_intervals", "no_gaps")][3]
    assert _unexpected(gaps, "source_path", "gap_s", "interval_s", "allowed_gap_s") == [("app2/vmstat-t.log", 11.0, 1.0, 2.5)]


def test_load_tool_defects_and_a_background_load_off_its_declared_rate(tmp_path):
    requests = runs.plan()
    # app2 logs one status 999; k6 logs one negative duration; the summary counts one request too many
    log = runs.access_log(requests, "app2").replace('" 200 1024', '" 999 1024', 1)
    k6 = runs.k6_json(requests) + runs.k6_point(runs.window(2)[0] + 2, -3.0, 200)
    elapsed = [r.elapsed_ms for r in requests] + [-3.0]
    summary_file = runs.k6_summary(elapsed, sum(r.status >= 400 for r in requests), count_offset=1)
    # background load declared at 5/s: 50 requests in iterations 1 and 2, only 20 in iteration 3
    background = "".join(
        runs.k6_point(runs.window(i)[0] + (k + 0.5) * runs.ITERATION_S / n, 4.0, 200, "http://bg/ping")
        for i, n in ((1, 50), (2, 50), (3, 20)) for k in range(n)
    )
    files = {"loadgen/k6.json": k6, "loadgen/k6-summary.json": summary_file, "bg/k6.json": background}
    sources = [{"kind": "k6_json", "host": "bgload", "path": "bg/k6.json", "declared_rate_per_s": 5}]
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "tools", logs={"app2": log}, files=files, sources=sources))
    assert not validate_run(warehouse, "tools").success
    failures = _failures(warehouse, "tools")
    # the status 999 and the negative duration are rejected lines at ingest, never data the checks see
    assert sorted(failures) == [
        ("background_load", "ran_at_declared_rate"),
        ("k6_summary_checks", "summary_agrees_with_points"),
    ]
    with open_warehouse(warehouse) as con:
        rejected = con.execute("select path, reason from rejected_lines where run_id = 'tools' order by path").fetchall()
    assert rejected == [("app2/access.log", "value: status 999 is not an HTTP status (0 or 100..599)"),
                        ("loadgen/k6.json", "value: elapsed_ms is negative")]
    rate = failures[("background_load", "ran_at_declared_rate")][3]
    assert _unexpected(rate, "iteration", "calls_per_s", "deviation_pct") == [(3, 2.0, 60.0)]
    k6_rows = failures[("k6_summary_checks", "summary_agrees_with_points")][3]
    # the summary counts the rejected negative point and one more: 1122 against the 1120 points kept
    assert ("http_reqs.count", 1122.0, 1120.0) in _unexpected(k6_rows, "metric", "summary_value", "points_value")


def test_revalidation_replaces_results_and_reingest_clears_them(tmp_path):
    bundle = runs.write_run(tmp_path / "b", "again")
    warehouse = _load(tmp_path, bundle)
    validate_run(warehouse, "again")
    validate_run(warehouse, "again")
    count = "select (select count(*) from expectation_results), (select count(*) from validations)"
    with open_warehouse(warehouse) as con:
        assert con.execute(count).fetchone() == (EXPECTATION_COUNT, 1)
    ingest_bundle(bundle, warehouse, progress=lambda m: None)
    with open_warehouse(warehouse) as con:
        assert con.execute(count).fetchone() == (0, 0)


def test_an_unknown_run_is_an_error(tmp_path):
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "known"))
    with pytest.raises(ValidationError, match="no run 'unknown'"):
        validate_run(warehouse, "unknown")


def test_the_validate_command(tmp_path):
    from tasks.cli.main import app

    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "cmd", skews={"app2": 30.0}))
    result = CliRunner().invoke(app, ["validate", "cmd", "-w", str(warehouse), "-f", "json", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == EXPECTATION_COUNT
    assert [r["expectation"] for r in rows if not r["success"]] == ["clocks_agree"]
    assert (tmp_path / "o" / "validation.html").is_file()
    assert CliRunner().invoke(app, ["validate", "nope", "-w", str(warehouse)]).exit_code == 1


def test_the_recorded_demo_bundle_passes(samples, tmp_path):
    warehouse = _load(tmp_path, samples / "bundle-echo")
    summary = validate_run(warehouse, "sample-echo-1")
    assert summary.success and summary.failed == [] and summary.warnings == []


def test_a_jmeter_summary_that_disagrees_with_its_jtl_fails_and_says_so(tmp_path):
    """JMeter's `summary =` says 102 calls; its JTL holds 100 rows (2 % apart): the expectation fails."""
    start, _ = runs.window(1)
    rows = "".join(f"{int((start + 1 + k * 0.05) * 1000)},12,POST /echo,200,OK,tg 1-1,text,true,,10,10,1,1,"
                   f"http://app/echo,11,0,1\n" for k in range(100))
    jtl = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage," \
          "bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n" + rows
    log = "2026-12-01 02:00:10,000 INFO o.a.j.r.Summariser: summary =    102 in 00:00:05 =   20.4/s Avg:    12 " \
          "Min:    12 Max:    12 Err:     0 (0.00%)\n"
    files = {"jm/jmeter-iter1.jtl": jtl, "jm/jmeter-iter1.log": log}
    sources = [{"kind": "jtl", "host": "jm", "path": "jm/jmeter-iter1.jtl", "iteration": 1},
               {"kind": "jmeter_log", "host": "jm", "path": "jm/jmeter-iter1.log", "iteration": 1}]
    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "jm", files=files, sources=sources))
    assert not validate_run(warehouse, "jm").success
    failures = _failures(warehouse, "jm")
    assert ("jmeter_summaries", "summary_agrees_with_jtl") in failures
    details = failures[("jmeter_summaries", "summary_agrees_with_jtl")][3]
    assert _unexpected(details, "path", "summary_calls", "jtl_calls") == [("jm/jmeter-iter1.log", 102, 100)]


def test_a_context_prepared_in_a_thread_is_the_one_the_validation_uses(tmp_path):
    """The campaign flow builds GX's context in a thread while the bundle loads (flows/campaign.py); a validation
    that starts before the thread is done waits for it instead of building a second one."""
    import threading

    from tasks.validate import gx

    warehouse = _load(tmp_path, runs.write_run(tmp_path / "b", "clean"))
    gx._dataframe_batches.cache_clear()
    ahead = threading.Thread(target=gx.prepare_context)
    ahead.start()  # building (~0.3 s with GX imported) while validate_run fetches its check rows
    summary = validate_run(warehouse, "clean")
    ahead.join()
    assert summary.success and summary.evaluated == EXPECTATION_COUNT
    assert gx._dataframe_batches.cache_info().misses == 1
