"""One event per shift: the change points of the nightly history grouped (tasks/history/events.py), checked
against the truth the nights were written with; triage of an event, and a late series joining it."""

from __future__ import annotations

from tasks.history.analysis import analyse_campaign
from tasks.history.events import group_events
from tasks.warehouse.connection import open_warehouse
from tests.unit.history.nightly import NIGHTS, OUTLIER, SHIFTS, cli, query, run_id


def _row(run: str, direction: str = "regression", kind: str = "change") -> dict:
    return {"scenario": "s", "plan_id": "p", "run_id": run, "kind": kind, "direction": direction}


def test_the_run_where_most_series_moved_takes_its_neighbours_and_the_rest_form_other_events():
    rows = [_row("r5"), _row("r5"), _row("r6"), _row("r4"), _row("r7"),  # r7 is two runs from r5
            _row("r5", "improvement"), _row("r5", kind="outlier"), _row("r20"), _row("r21"), _row("r21")]
    group_events("c", rows, {("s", "p", f"r{n}"): n for n in range(30)})
    events = [row["event_id"] for row in rows]
    assert len(set(events[:4])) == 1  # r4, r5, r6 around r5 (three series there)
    assert len(set(events)) == 5  # and r7 alone, the improvement, the outlier, r20 + r21 around r21
    assert events[7] == events[8] == events[9] and len({events[4], events[0], events[5], events[6]}) == 4
    again = [{name: value for name, value in row.items() if name != "event_id"} for row in rows]
    group_events("c", again, {("s", "p", f"r{n}"): n for n in range(30)})
    assert [row["event_id"] for row in again] == events  # the same ids every analysis


def test_each_shift_is_one_event_of_every_series_it_moved(warehouse):
    events = query(warehouse, "select event_id, run_id, kind, direction, sides, metrics, series from change_events")
    positions = {run_id(n): n for n in range(NIGHTS)}
    expected = {}  # (night, direction) -> sides, metrics
    for at, side, metrics, direction in SHIFTS:
        sides, names = expected.get((at, direction), (set(), set()))
        expected[at, direction] = (sides | {side}, names | set(metrics))
    found = {}
    for event_id, at, kind, direction, sides, metrics, series in events:
        if kind != "change":
            continue
        truth = [key for key in expected if key[1] == direction and abs(positions[at] - key[0]) <= 1]
        assert len(truth) <= 1
        if truth:
            assert truth[0] not in found, f"two events for the shift of night {truth[0][0]}"
            found[truth[0]] = (set(sides.split(", ")), set(metrics.split(", ")), series)
    assert {key: value[:2] for key, value in found.items()} == expected
    assert sum(1 for *_, kind, _, _, _, _ in events if kind == "change") <= len(expected) + 1  # one false at most
    (outlier,) = [row for row in events if row[2] == "outlier"]
    assert outlier[1] == run_id(OUTLIER) and outlier[6] > 20
    # every change point of an event is at its run or next to it, and with its kind and direction
    apart = query(warehouse, "select count(*) from change_points join change_events as e using (event_id) "
                             "join runs as here on here.run_id = change_points.run_id "
                             "join runs as there on there.run_id = e.run_id "
                             "where abs(date_diff('day', here.started_at, there.started_at)) > 1 "
                             "or change_points.kind <> e.kind or change_points.direction <> e.direction")
    assert apart == [(0,)]


def test_a_series_that_joins_a_triaged_event_is_triaged_with_it(copy):
    ((event_id, series),) = query(copy, "select event_id, series from change_events where kind = 'change' "
                                        "and run_id between $a and $b and metrics like '%p95_ms%'",
                                  {"a": run_id(9), "b": run_id(11)})
    # triaged twice: every decision is kept, the latest is the event's status (and the one a joining series takes)
    assert cli(copy, "triage", event_id, "--expected", "--note", "meant").returncode == 0
    assert cli(copy, "triage", event_id, "--acknowledge", "--note", "on it").returncode == 0
    ((capacity,),) = query(copy, "select event_id from change_events where metrics = 'calls_per_s'")
    ((one,),) = query(copy, "select change_id from change_points where event_id = $e limit 1", {"e": capacity})
    assert cli(copy, "triage", one, "--invalid").returncode == 0  # one series of the capacity event only
    with open_warehouse(copy, write=True) as con:
        # as if the last analysis had not seen two series of each event yet: the next one finds them first
        unseen = [row[0] for row in con.execute(
            "select change_id from detected_changes where event_id in ($a, $b) and change_id <> $one "
            "order by change_id limit 4", {"a": event_id, "b": capacity, "one": one}).fetchall()]
        for table in ("detected_changes", "change_triage"):  # unseen, so never triaged either
            con.execute(f"delete from {table} where list_contains($unseen, change_id)", {"unseen": unseen})
        outcome = analyse_campaign(con, "nightly", run_id(NIGHTS - 1))
    assert query(copy, "select status, triage_note, count(*) from change_points where event_id = $e group by all",
                 {"e": event_id}) == [("acknowledged", "on it", series)]
    statuses = dict(query(copy, "select status, count(*) from change_points where event_id = $e group by all",
                          {"e": capacity}))
    assert statuses["invalid"] == 1 and statuses["new"] >= 1  # a word on one series is none on the others
    assert query(copy, "select status from change_events where event_id = $e", {"e": capacity}) == [("new",)]
    assert all(event["event_id"] != event_id for event in outcome.new_regressions)
