"""A campaign's history options, read from its newest run's manifest; the error every history step raises.

Kept apart from the analysis (numpy, scipy, pandas), and the manifest model (pydantic) is loaded only when
the options are read, so the commands that only read start fast.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    from tasks.bundle.manifest import HistoryOptions


class HistoryError(RuntimeError):
    """A history that cannot be analysed or triaged as asked (an unknown run, change or campaign)."""


def campaign_options(con: duckdb.DuckDBPyConnection, campaign: str) -> HistoryOptions:
    """The `history` options of the campaign's newest run (its manifest), defaults filled in."""
    from tasks.bundle.manifest import HistoryOptions  # heavy: pydantic
    row = con.execute("select manifest -> 'history' from runs where campaign = $campaign "
                      "order by started_at desc, run_id desc limit 1", {"campaign": campaign}).fetchone()
    return HistoryOptions.model_validate(json.loads(row[0]) if row and row[0] else {})
