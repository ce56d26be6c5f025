"""Re-analyse a campaign's history: the change points of every series, stored in one transaction.

Runs after every ingest and validation of a run (the `history` task, `perfcampaign ingest` and `validate`)
and after `perfcampaign exclude`: series are read from the view `series` (comparable runs, exclusions left
out), each plan's series go to `pooled.find_changes` (each series alone, then the groups one change moves
together) with the campaign's settings (the newest run's manifest `history`), and the campaign's rows of `detected_changes` are replaced. A change keeps the id and the
`first_detected_in` it had (`change_id` hashes the campaign, the series key, the run and the kind), so a
triage survives re-analysis and a regression is "new" only to the analysis that first found it; a change
that moved to a neighbouring run keeps both (`carry_over`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from tasks.history.changepoints import Change, ChangeSettings
from tasks.history.events import group_events
from tasks.history.options import HistoryError, campaign_options
from tasks.history.pooled import EXTREMES, find_changes
from tasks.history.series import Series
from tasks.settings import HIGHER_IS_BETTER
from tasks.warehouse.connection import open_warehouse, transaction
from tasks.warehouse.engines import lake_lock, parse_warehouse
from tasks.warehouse.models import model_sql

KEY = ("scenario", "plan_id", "side", "host", "iteration", "label", "metric")


@dataclass
class HistoryOutcome:
    """What one analysis of a campaign found, for the terminal, the flows and the report."""

    campaign: str
    trigger_run_id: str
    settings: ChangeSettings
    series: int = 0
    short_series: int = 0  # series with fewer than settings.min_runs points: nothing claimed on them
    changes: int = 0
    outliers: int = 0
    events: int = 0  # change points grouped: one per shift (tasks/history/events.py)
    new_regressions: list[dict[str, Any]] = field(default_factory=list)  # change_events rows

    def line(self) -> str:
        """One line for the terminal and the logs."""
        return (f"history of {self.campaign}: {self.series} series ({self.short_series} under "
                f"{self.settings.min_runs} runs), {self.changes} change points and {self.outliers} outliers in "
                f"{self.events} events, {len(self.new_regressions)} new regression events in {self.trigger_run_id}")


def campaign_settings(con: duckdb.DuckDBPyConnection, campaign: str) -> ChangeSettings:
    """The detection settings of the campaign's newest run (its manifest's `history`), defaults filled in."""
    options = campaign_options(con, campaign)
    return ChangeSettings(min_change_pct=options.min_change_pct, p_value=options.p_value, min_runs=options.min_runs,
                          settle_runs=options.settle_runs, alert_extremes=options.alert_extremes)


def change_id(campaign: str, key: dict[str, Any], run_id: str, kind: str) -> str:
    """The id of a change: the same series, run and kind give the same id in every analysis."""
    text = "\x1f".join([campaign, *(str(key[name]) for name in KEY), run_id, kind])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def label_changes(before: dict[str, str] | None, after: dict[str, str] | None) -> str | None:
    """The labels that differ between two runs: `sut_version 1.4.0 → 1.5.0`; None when none do."""
    before, after = before or {}, after or {}
    moved = [f"{name} {before.get(name, '-')} → {after.get(name, '-')}"
             for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]
    return ", ".join(moved) or None


def direction(metric: str, before: float, after: float) -> str:
    """Latency, errors, CPU and GC up, throughput down: a regression."""
    return "regression" if (after > before) != (metric in HIGHER_IS_BETTER) else "improvement"


def _series_changes(con: duckdb.DuckDBPyConnection, campaign: str, settings: ChangeSettings,
                    outcome: HistoryOutcome) -> list[dict[str, Any]]:
    points = con.execute(model_sql("reports/history_points"), {"campaign": campaign}).fetchnumpy()
    labels = dict(con.execute("select run_id, labels from runs where campaign = $campaign",
                              {"campaign": campaign}).fetchall())
    started = dict(con.execute("select run_id, started_at from runs where campaign = $campaign",
                               {"campaign": campaign}).fetchall())
    positions = {(scenario, plan, run): at for scenario, plan, run, at in
                 con.execute(model_sql("reports/history_run_positions"), {"campaign": campaign}).fetchall()}
    numbers = np.asarray(points["series_no"])
    bounds = [0, *(np.flatnonzero(np.diff(numbers)) + 1), numbers.size] if numbers.size else [0]
    plans: dict[tuple, list[Series]] = {}  # (scenario, plan_id) -> its series long enough to claim anything
    for start, stop in zip(bounds, bounds[1:]):
        outcome.series += 1
        if stop - start < settings.min_runs:
            outcome.short_series += 1
            continue
        key = {name: _plain(points[name][start]) for name in KEY}
        runs = points["run_id"][start:stop]
        at = np.array([positions[key["scenario"], key["plan_id"], str(run)] for run in runs])
        plans.setdefault((key["scenario"], key["plan_id"]), []).append(Series(
            key, at, np.asarray(points["value"][start:stop], dtype=float),
            np.asarray(points["calls"][start:stop], dtype=float), runs=runs))
    rows = [_row(campaign, s.key, change, found_by, s.runs, labels, started, settings)
            for series in plans.values() for s, change, found_by in find_changes(series, settings)]
    group_events(campaign, rows, positions)
    return rows


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _row(campaign: str, key: dict[str, Any], change: Change, found_by: str, runs: np.ndarray, labels: dict,
         started: dict, settings: ChangeSettings) -> dict[str, Any]:
    run_id, previous = str(runs[change.index]), str(runs[change.index - 1]) if change.index else None
    return {
        "change_id": change_id(campaign, key, run_id, change.kind), "campaign": campaign, **key,
        "run_id": run_id, "run_started_at": started[run_id], "previous_run_id": previous,
        "before_value": change.before_value, "after_value": change.after_value, "change_pct": change.change_pct,
        "direction": direction(key["metric"], change.before_value, change.after_value),
        "p_value": change.p_value, "kind": change.kind, "found_by": found_by, "pending": change.pending,
        "alerted": settings.alert_extremes or key["metric"] not in EXTREMES,
        "label_changes": label_changes(labels.get(previous), labels.get(run_id)) if previous else None,
        "neighbours": {str(runs[i]) for i in (change.index - 1, change.index + 1) if 0 <= i < len(runs)},
    }


def carry_over(rows: list[dict[str, Any]], earlier: list[dict[str, Any]], trigger_run_id: str) -> dict[str, str]:
    """Give each row the `first_detected_in` of what an earlier analysis found; returns {new id: earlier id}.

    The same change keeps its id. A change that moved to a neighbouring run of its series as more nights
    arrived (same series, kind and direction) is the same finding: it keeps its first detection (so it is
    not announced again) and, through the returned map, its triage.
    """
    by_id = {row["change_id"]: row for row in earlier}
    by_series: dict[tuple, list[dict[str, Any]]] = {}
    for row in earlier:
        by_series.setdefault(tuple(row[name] for name in (*KEY, "kind", "direction")), []).append(row)
    moved: dict[str, str] = {}
    for row in rows:
        neighbours = row.pop("neighbours")
        same = by_id.get(row["change_id"])
        if same is None:
            candidates = by_series.get(tuple(row[name] for name in (*KEY, "kind", "direction")), [])
            same = next((old for old in candidates if old["run_id"] in neighbours), None)
            if same is not None:
                moved[row["change_id"]] = same["change_id"]
        # a pending change is claimed when it settles: then it is new (announced), not before
        settled = same is not None and (row["pending"] or not same["pending"])
        row["first_detected_in"] = same["first_detected_in"] if settled else trigger_run_id
    return moved


def analyse_campaign(con: duckdb.DuckDBPyConnection, campaign: str, trigger_run_id: str) -> HistoryOutcome:
    """Re-analyse every series of `campaign` and replace its detected changes, in one transaction.

    `trigger_run_id` is the run whose ingest or validation asked for it: the `first_detected_in` of what
    this analysis is the first to find.
    """
    settings = campaign_settings(con, campaign)
    outcome = HistoryOutcome(campaign, trigger_run_id, settings)
    now = datetime.now(timezone.utc)
    with transaction(con):
        rows = _series_changes(con, campaign, settings, outcome)
        cursor = con.execute("select * from detected_changes where campaign = $campaign", {"campaign": campaign})
        earlier = [dict(zip([d[0] for d in cursor.description], row)) for row in cursor.fetchall()]
        moved = carry_over(rows, earlier, trigger_run_id)
        for row in rows:
            row["detected_at"] = now
        if moved:  # a triage (its every decision) follows its change to the neighbouring run
            con.execute("insert into change_triage select pairs.new_id, old.status, old.note, old.triaged_at "
                        "from (select unnest($new) as new_id, unnest($old) as old_id) as pairs "
                        "join change_triage as old on old.change_id = pairs.old_id "
                        "where pairs.new_id not in (select change_id from change_triage)",
                        {"new": list(moved), "old": list(moved.values())})
        con.execute("delete from detected_changes where campaign = $campaign", {"campaign": campaign})
        if rows:
            frame = pd.DataFrame(rows)  # one insert of all rows: executemany costs a statement per row
            con.register("analysed_changes", frame)
            try:
                con.execute("insert into detected_changes by name select * from analysed_changes")
            finally:
                con.unregister("analysed_changes")
        con.execute(model_sql("reports/history_event_triage"), {"campaign": campaign, "run_id": trigger_run_id,
                                                                 "at": now})
    outcome.changes = sum(row["kind"] == "change" for row in rows)
    outcome.outliers = len(rows) - outcome.changes
    outcome.events = len({row["event_id"] for row in rows})
    outcome.new_regressions = _new_regressions(con, campaign, trigger_run_id)
    return outcome


def _new_regressions(con: duckdb.DuckDBPyConnection, campaign: str, run_id: str) -> list[dict[str, Any]]:
    cursor = con.execute(model_sql("reports/history_new_regressions"), {"campaign": campaign, "run_id": run_id})
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


@contextmanager
def history_writer(warehouse: Path | str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A writing connection for one analysis at a time: on a lake, two analyses at once (two ingests of one
    campaign on two workers) would each store what its own snapshot showed, or one would fail on the other's
    commit; each now starts from what the one before committed."""
    target = parse_warehouse(warehouse)
    with lake_lock(target, "perfcampaign history", "another process analyses the history"), \
            open_warehouse(target, write=True) as con:
        yield con


def analyse_run(warehouse: Path | str, run_id: str) -> HistoryOutcome:
    """Re-analyse the history of the campaign of `run_id` after its ingest or validation (a file or a lake)."""
    with history_writer(warehouse) as con:
        row = con.execute("select campaign from runs where run_id = $run_id", {"run_id": run_id}).fetchone()
        if row is None:
            raise HistoryError(f"no run {run_id!r} in the warehouse (see `perfcampaign runs`)")
        return analyse_campaign(con, row[0], run_id)
