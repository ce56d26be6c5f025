"""A person's word on the history: a change point triaged, a run excluded. Kept in tables no re-ingest touches."""

from __future__ import annotations

from datetime import datetime, timezone

import duckdb

from tasks.history.analysis import HistoryOutcome, analyse_campaign
from tasks.history.options import HistoryError
from tasks.warehouse.connection import transaction

STATUSES = ("acknowledged", "expected", "invalid")


def triage_change(con: duckdb.DuckDBPyConnection, change_id: str, status: str, note: str | None) -> None:
    """Set the status of a change point (it stays set through re-analysis); an unknown id changes nothing."""
    if status not in STATUSES:
        raise HistoryError(f"status {status!r}: expected one of {', '.join(STATUSES)}")
    params = {"change_id": change_id}
    if not con.execute("select count(*) from detected_changes where change_id = $change_id", params).fetchone()[0]:
        raise HistoryError(f"no change point {change_id!r} (see `perfcampaign changes`)")
    with transaction(con):
        con.execute("delete from change_triage where change_id = $change_id", params)
        con.execute("insert into change_triage values ($change_id, $status, $note, $at)",
                    {**params, "status": status, "note": note, "at": datetime.now(timezone.utc)})


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
