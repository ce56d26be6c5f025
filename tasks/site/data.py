"""What the site shows, read from the warehouse with the `sql/reports/site_*.sql` queries; no maths here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from tasks.warehouse.models import model_sql

TREND_RUNS = 60  # the runs a trend chart shows


@dataclass
class CampaignData:
    """One campaign: its home row, key series points, events with their change points and triage history, runs,
    the figures its last run's requirements judged and the capacity over the trend's runs."""

    home: dict[str, Any]
    points: list[dict[str, Any]]
    events: list[dict[str, Any]]
    event_series: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    event_triage: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # newest first
    runs: list[dict[str, Any]] = field(default_factory=list)
    requirements: list[dict[str, Any]] = field(default_factory=list)
    capacity: list[dict[str, Any]] = field(default_factory=list)


def rows(con: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> list[dict[str, Any]]:
    """The rows of `sql/reports/<name>.sql` as dicts."""
    cursor = con.execute(model_sql(f"reports/{name}"), params or {})
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def _by(found: list[dict[str, Any]], key: str = "campaign") -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in found:
        out.setdefault(row[key], []).append(row)
    return out


def read_site(con: duckdb.DuckDBPyConnection) -> list[CampaignData]:
    """Every campaign with all its pages need: one query per kind of row, not per campaign (20 campaigns of
    1,000 runs: 7 queries instead of 140)."""
    if not con.execute(model_sql("reports/site_has_reports")).fetchone()[0]:
        con.execute(model_sql("reports/site_no_reports"))
    points = _by(rows(con, "site_series", {"last_runs": TREND_RUNS}))
    events = _by(rows(con, "site_events"))
    changes = _by(rows(con, "site_event_series"))
    triage = _by(rows(con, "site_event_triage"))
    runs = _by(rows(con, "site_runs"))
    requirements = _by(rows(con, "site_requirement_series", {"last_runs": TREND_RUNS}))
    capacity = _by(rows(con, "site_capacity_series", {"last_runs": TREND_RUNS}))
    out = []
    for home in rows(con, "site_campaigns"):
        name = home["campaign"]
        out.append(CampaignData(home=home, points=points.get(name, []), events=events.get(name, []),
                                event_series=_by(changes.get(name, []), "event_id"),
                                event_triage=_by(triage.get(name, []), "event_id"), runs=runs.get(name, []),
                                requirements=requirements.get(name, []), capacity=capacity.get(name, [])))
    return out
