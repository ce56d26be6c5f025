"""Nightly history end to end on real bundles (tests/unit/history/nightly.py): series, change points against
the truth the nights were written with, exclusions, outliers, plan changes, triage and the commands.
"""

from __future__ import annotations

from tasks.warehouse.connection import open_warehouse
from tests.history_nights import LATENCY_METRICS, write_night
from tests.unit.history.nightly import (
    FAILED,
    NEW_PLAN,
    NIGHTS,
    NO_CLIENT_2,
    OUTLIER,
    SHIFTS,
    cli,
    command,
    main_plan_series,
    night,
    query,
    run_id,
)


def test_shifted_series_are_found_at_the_right_run_with_at_most_one_false_change(warehouse):
    series = main_plan_series(warehouse)
    changes = query(warehouse, "select side, host, iteration, label, metric, run_id, direction from change_points "
                               "where kind = 'change'")
    found_at: dict[tuple, list[tuple[int, str]]] = {}
    for side, host, iteration, label, metric, at, direction in changes:
        key = (side, host, iteration, label, metric)
        found_at.setdefault(key, []).append((series[key].index(at), direction))
    truth, found, wrong_direction, matched = 0, 0, [], set()
    for shift_night, side, metrics, direction in SHIFTS:
        for key, runs in series.items():
            if key[0] != side or key[4] not in metrics:
                continue
            truth += 1
            position = runs.index(run_id(shift_night))
            hits = [(p, d) for p, d in found_at.get(key, []) if abs(p - position) <= 1]
            if hits:
                found += 1
                matched.update((key, p) for p, _ in hits)
                wrong_direction += [(key, d) for _, d in hits if d != direction]
    false = [(key, p) for key, hits in found_at.items() for p, _ in hits if (key, p) not in matched]
    assert truth > 150
    assert found / truth >= 0.9, f"found {found} of {truth}"
    assert len(false) <= 1, false
    assert not wrong_direction, wrong_direction[:5]


def test_a_one_night_outlier_is_one_outlier_not_two_changes(warehouse):
    at_outlier = query(warehouse, "select kind, direction, count(*) from change_points where run_id in ($a, $b) "
                                  "group by all", {"a": run_id(OUTLIER), "b": run_id(OUTLIER + 1)})
    kinds = {(kind, direction): count for kind, direction, count in at_outlier}
    assert set(kinds) == {("outlier", "regression")}
    # every latency series of the main plan holds it
    latency = [key for key in main_plan_series(warehouse) if key[4] in LATENCY_METRICS]
    assert kinds["outlier", "regression"] >= 0.9 * len(latency)


def test_a_failed_run_is_in_no_series_and_in_the_exclusions(warehouse):
    assert query(warehouse, "select count(*) from series where run_id = $r", {"r": run_id(FAILED)}) == [(0,)]
    assert query(warehouse, "select count(*) > 0 from series_values where run_id = $r", {"r": run_id(FAILED)}) == [(True,)]
    assert query(warehouse, "select cause, reason from history_exclusions") == [("failed", "run failed: stage lost half way")]
    assert query(warehouse, "select count(*) from change_points where run_id in ($a, $b)",
                 {"a": run_id(FAILED), "b": run_id(FAILED + 1)}) == [(0,)]


def test_a_run_missing_an_iteration_on_one_side_is_missing_from_those_series_only(warehouse, nightly_file):
    """Night 6's JTL has no request of iteration 2: it leaves the client's iteration-2 series, no other."""
    def keys(n: int) -> set[tuple]:
        return set(query(warehouse, "select side, host, iteration, label, metric from series where run_id = $r",
                         {"r": run_id(n)}))

    before, lost, after = keys(NO_CLIENT_2 - 1), keys(NO_CLIENT_2), keys(NO_CLIENT_2 + 1)
    client_2 = {key for key in before if key[0] == "client" and key[2] == 2}
    assert len(client_2) >= 8 and before == after
    assert lost == before - client_2  # every other series has the run: the server's iteration 2 too
    assert any(key[0] == "server" and key[2] == 2 for key in lost)
    # the client's requests of that night are all in iterations 1 and 3 (the JTL as written, read with python)
    jtl = (nightly_file.parent / f"night-{NO_CLIENT_2:03d}" / "loadgen" / "result.jtl").read_text().splitlines()
    calls = query(warehouse, "select sum(calls) from series where run_id = $r and side = 'client' and host = '(all)' "
                             "and label = '(all)' and metric = 'avg_ms'", {"r": run_id(NO_CLIENT_2)})
    assert calls == [(len(jtl) - 1,)]
    # no change point nor outlier claimed around it (no shift there), in any series
    assert query(warehouse, "select count(*) from change_points where run_id between $a and $b",
                 {"a": run_id(NO_CLIENT_2 - 1), "b": run_id(NO_CLIENT_2 + 1)}) == [(0,)]


def test_another_plan_is_another_series_too_short_to_claim_anything(warehouse):
    plans = query(warehouse, "select plan_id, count(distinct run_id) from series group by 1 order by 2")
    assert [count for _, count in plans] == [NIGHTS - NEW_PLAN, NEW_PLAN - 1]
    assert query(warehouse, "select count(*) from change_points where plan_id = $p", {"p": plans[0][0]}) == [(0,)]


def test_changes_say_which_labels_changed_and_when_they_were_first_seen(warehouse):
    rows = query(warehouse, "select distinct label_changes, first_detected_in from change_points "
                            "where run_id = $r and kind = 'change'", {"r": run_id(10)})
    # pending the morning after night 11 (two runs at the new level), claimed and announced after night 12; a few
    # series join on later nights
    assert {labels for labels, _ in rows} == {"sut_version 1.0.0 → 1.1.0"}
    first = query(warehouse, "select first_detected_in, count(*) from change_points where run_id = $r "
                             "and kind = 'change' group by all order by 2 desc", {"r": run_id(10)})
    assert first[0][0] == run_id(12) and first[0][1] >= 0.9 * sum(count for _, count in first)
    assert min(detected for detected, _ in first) == run_id(12)
    later = query(warehouse, "select distinct first_detected_in from change_points where run_id = $r", {"r": run_id(18)})
    assert later == [(run_id(NIGHTS - 1),)]


def test_history_marks_changes_exclusions_and_the_new_plan(warehouse):
    done = command(warehouse, "history", "nightly", "--metric", "p95_ms", "--side", "server", "--host", "(all)",
                   "--iteration", "3", "--label", "(all)", "-f", "csv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 + NIGHTS
    by_run = {line.split(",")[7]: line for line in lines[1:]}
    assert "change +" in by_run[run_id(10)] and "sut_version 1.0.0 → 1.1.0" in by_run[run_id(10)]
    assert "outlier +" in by_run[run_id(OUTLIER)]
    assert "excluded: run failed" in by_run[run_id(FAILED)]
    # the failed run has a plan of its own (another load in iteration 3): shown in time order among the runs
    # before and after it, never as a plan of its own
    assert "plan changed" not in by_run[run_id(FAILED)]
    shown = [line.split(",")[7] for line in lines[1:]]
    assert shown[:NEW_PLAN] == [run_id(n) for n in range(NEW_PLAN)]
    assert "plan changed" in by_run[run_id(NEW_PLAN)]
    assert "fewer than the 5 comparable runs needed (3 at least): no change is claimed" in done.stderr
    last = cli(warehouse, "history", "nightly", "--metric", "p95_ms", "--side", "server", "--host", "(all)",
               "--iteration", "3", "--label", "(all)", "--last", "2", "-f", "csv")
    assert [line.split(",")[7] for line in last.stdout.splitlines()[1:]] == \
        [run_id(NEW_PLAN - 2), run_id(NEW_PLAN - 1), run_id(NIGHTS - 2), run_id(NIGHTS - 1)]
    table = cli(warehouse, "history", "nightly", "--metric", "p95_ms", "--side", "server", "--host", "(all)",
                "--iteration", "3", "--label", "(all)")
    ((event_id,),) = query(warehouse, "select event_id from change_points where side = 'server' and host = '(all)' "
                                      "and iteration = 3 and label = '(all)' and metric = 'p95_ms' and run_id = $r",
                           {"r": run_id(10)})
    assert f"(sut_version 1.0.0 → 1.1.0), new, event {event_id}" in table.stdout  # the whole note, in a table too


def test_changes_fail_on_an_untriaged_regression_until_triaged(copy):
    import json

    # the errors of night 27 have two runs of their plan after them (night 29 starts another plan): pending for
    # good, listed as such and never failing the build
    pending = command(copy, "changes", "--campaign", "nightly", "--since", "2026-10-28", "-f", "json", "--fail-on",
                      "regression")
    assert pending.returncode == 0, pending.stderr
    (errors,) = [row for row in json.loads(pending.stdout) if row["kind"] == "change"]
    assert (errors["metrics"], errors["direction"], errors["sides"], errors["status"]) == \
        ("error_rate", "regression", "client", "pending")
    listed = command(copy, "changes", "--campaign", "nightly", "--since", "2026-10-19", "-f", "json", "--fail-on",
                     "regression")
    assert listed.returncode == 3, listed.stderr
    rows = json.loads(listed.stdout)
    (event,) = [row for row in rows if row["kind"] == "change" and row["status"] == "new"
                and row["direction"] == "regression"]  # one event for every series the shift moved
    assert (event["metrics"], event["run_id"], event["sides"]) == ("calls_per_s", run_id(18), "client, server")
    assert event["series"] == len(event["series_keys"]) == query(
        copy, "select count(*) from change_points where event_id = $e", {"e": event["event_id"]})[0][0] > 1
    assert rows[0] == event  # new regressions first
    done = cli(copy, "triage", event["event_id"], "--expected", "--note", "a smaller stage on purpose")
    assert done.returncode == 0 and f"({event['series']} change points)" in done.stdout
    assert cli(copy, "changes", "--campaign", "nightly", "--since", "2026-10-19", "--fail-on", "regression").returncode == 0
    assert query(copy, "select distinct status, triage_note from change_points where metric = 'calls_per_s' "
                       "and kind = 'change'") == [("expected", "a smaller stage on purpose")]
    series = cli(copy, "changes", "--event", event["event_id"], "-f", "csv")
    assert len(series.stdout.splitlines()) == 1 + event["series"]


def test_triage_of_an_unknown_change_or_run_changes_nothing(copy):
    before = query(copy, "select count(*) from change_triage union all select count(*) from run_exclusions")
    done = command(copy, "triage", "0123456789ab", "--acknowledge")
    assert done.returncode == 1 and "no event or change point '0123456789ab'" in done.stderr
    done = cli(copy, "exclude", "nightly-999", "--note", "x")
    assert done.returncode == 1 and "no run 'nightly-999'" in done.stderr
    assert query(copy, "select count(*) from change_triage union all select count(*) from run_exclusions") == before


def test_an_excluded_run_leaves_the_series_and_survives_a_re_ingest(copy, tmp_path):
    done = cli(copy, "exclude", run_id(OUTLIER), "--note", "load generator swapping")
    assert done.returncode == 0, done.stderr
    assert query(copy, "select count(*) from series where run_id = $r", {"r": run_id(OUTLIER)}) == [(0,)]
    assert query(copy, "select count(*) from change_points where run_id = $r", {"r": run_id(OUTLIER)}) == [(0,)]
    # a re-ingest of the run (the marts rebuilt for it) keeps the person's word
    again = command(copy, "ingest", str(write_night(tmp_path, OUTLIER, night(OUTLIER))))
    assert again.returncode == 0, again.stderr
    assert query(copy, "select cause, reason from history_exclusions where run_id = $r", {"r": run_id(OUTLIER)}) == \
        [("person", "marked invalid: load generator swapping")]


def test_the_report_fails_a_testcase_per_new_regression_and_shows_the_history(warehouse, tmp_path):
    from tasks.report.build import build_report

    ((announced, new),) = query(warehouse, "select first_detected_in, series from change_events where run_id = $r "
                                           "and kind = 'change'", {"r": run_id(10)})
    # claimed once settled: three runs at the new level (a series that placed it a night early had them after 11)
    assert announced in (run_id(11), run_id(12)) and new > 20
    files = build_report(warehouse, announced, tmp_path / "report")
    junit = files.path("junit").read_text()
    assert junit.count('type="Regression"') == 1  # one shift of both sides: one event, one failing testcase
    assert f"regression of {new} series" in junit and "sut_version 1.0.0 → 1.1.0" in junit
    html = files.path("html").read_text()
    assert 'id="fig-history"' in html and "1 new regression found by this run's analysis" in html


def test_the_baseline_comes_from_the_current_segment(warehouse, tmp_path):
    from tasks.report.data import default_baseline

    with open_warehouse(warehouse) as con:  # with the macros
        baselines = {n: default_baseline(con, run_id(n), {"labels": {}}) for n in (10, 11, OUTLIER + 1, FAILED + 1)}
    assert baselines == {10: run_id(9), 11: run_id(10), OUTLIER + 1: run_id(OUTLIER - 1), FAILED + 1: run_id(FAILED - 1)}


def test_a_change_that_moves_to_the_next_run_keeps_its_first_detection_and_triage(copy):
    """As more nights arrive a change may settle one run later: the same finding, not a new regression."""
    from tasks.history.analysis import analyse_campaign

    key = {"side": "server", "host": "(all)", "iteration": 3, "label": "(all)", "metric": "p95_ms", "kind": "change"}
    where = " and ".join(f"{name} = ${name}" for name in key)
    ((change_id, at, first),) = query(copy, f"select change_id, run_id, first_detected_in from change_points "
                                            f"where {where} and run_id = $r", {**key, "r": run_id(10)})
    with open_warehouse(copy, write=True) as con:
        # as if an earlier analysis had placed it one night before, and a person had triaged it there
        con.execute("update detected_changes set change_id = 'earlier', run_id = $r, first_detected_in = 'x' "
                    "where change_id = $c", {"r": run_id(9), "c": change_id})
        con.execute("insert into change_triage values ('earlier', 'acknowledged', 'on it', now())")
        outcome = analyse_campaign(con, "nightly", run_id(NIGHTS - 1))
    ((event_id,),) = query(copy, "select event_id from change_points where change_id = $c", {"c": change_id})
    assert event_id not in {event["event_id"] for event in outcome.new_regressions}
    assert query(copy, "select first_detected_in, status, triage_note from change_points where change_id = $c",
                 {"c": change_id}) == [("x", "acknowledged", "on it")]
