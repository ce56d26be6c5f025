"""A person's word on the history: a change point triaged, a run excluded. Kept in tables no re-ingest touches."""

from __future__ import annotations

from datetime import datetime, timezone

import duckdb

from tasks.history.analysis import HistoryOutcome, analyse_campaign
from tasks.history.options import HistoryError
from tasks.warehouse.connection import transaction

STATUSES = ("acknowledged", "expected", "invalid")


def triage_change(con: duckdb.DuckDBPyConnection, identifier: str, status: str, note: str | None) -> int:
    """Set the status of an event (each of its change points) or of one change point; it stays set through
    re-analysis. Every decision is kept (appended with its time and note; the latest is the status), so an
    event's triage history can be shown. Returns how many change points it set; an unknown id changes nothing."""
    if status not in STATUSES:
        raise HistoryError(f"status {status!r}: expected one of {', '.join(STATUSES)}")
    params = {"id": identifier}
    changes = [row[0] for row in con.execute("select change_id from detected_changes where change_id = $id "
                                             "or event_id = $id", params).fetchall()]
    if not changes:
        raise HistoryError(f"no event or change point {identifier!r} (see `perfcampaign changes`)")
    con.execute("insert into change_triage select unnest($changes), $status, $note, $at",
                {"changes": changes, "status": status, "note": note, "at": datetime.now(timezone.utc)})
    return len(changes)


def exclude_run(con: duckdb.DuckDBPyConnection, run_id: str, note: str) -> HistoryOutcome:
    """Take a run out of every series (marked invalid by a person) and re-analyse its campaign."""
    if not note.strip():
        raise HistoryError("say why the run is excluded (--note)")
    row = con.execute("select campaign from runs where run_id = $run_id", {"run_id": run_id}).fetchone()
    if row is None:
        raise HistoryError(f"no run {run_id!r} in the warehouse (see `perfcampaign runs`)")
    with transaction(con):
        con.execute("delete from run_exclusions where run_id = $run_id", {"run_id": run_id})
        con.execute("insert into run_exclusions values ($run_id, $note, $at)",
                    {"run_id": run_id, "note": note.strip(), "at": datetime.now(timezone.utc)})
    newest = con.execute("select run_id from runs where campaign = $campaign order by started_at desc, run_id desc "
                         "limit 1", {"campaign": row[0]}).fetchone()[0]
    return analyse_campaign(con, row[0], newest)
