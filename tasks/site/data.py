"""What the site shows, read from the warehouse with the `sql/reports/site_*.sql` queries; no maths here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from tasks.warehouse.models import model_sql

TREND_RUNS = 60  # the runs a trend chart shows


@dataclass
class CampaignData:
    """One campaign: its home row, key series points, events with their change points, and runs."""

    home: dict[str, Any]
    points: list[dict[str, Any]]
    events: list[dict[str, Any]]
    event_series: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)


def rows(con: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> list[dict[str, Any]]:
    """The rows of `sql/reports/<name>.sql` as dicts."""
    cursor = con.execute(model_sql(f"reports/{name}"), params or {})
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def read_site(con: duckdb.DuckDBPyConnection, campaigns: set[str] | None = None) -> list[CampaignData]:
    """Every campaign (or the given ones) with all its pages need."""
    con.execute(model_sql("reports/site_no_reports"))  # a warehouse no report was published from has no table
    out = []
    for home in rows(con, "site_campaigns"):
        if campaigns is not None and home["campaign"] not in campaigns:
            continue
        params = {"campaign": home["campaign"]}
        series: dict[str, list[dict[str, Any]]] = {}
        for change in rows(con, "site_event_series", params):
            series.setdefault(change["event_id"], []).append(change)
        out.append(CampaignData(
            home=home,
            points=rows(con, "site_series", {**params, "last_runs": TREND_RUNS}),
            events=rows(con, "site_events", params),
            event_series=series,
            runs=rows(con, "site_runs", params),
        ))
    return out
