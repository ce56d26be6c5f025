"""Everything a report shows, read from the warehouse in one go: marts and `sql/reports/` queries, no maths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb
import pandas as pd

from tasks.report.compare import compare_runs, requirement_changes
from tasks.report.compare_hosts import compare_hosts
from tasks.validate.run import run_thresholds
from tasks.warehouse.models import load_models, model_sql, warehouse_has

MAX_LABELS = 8
HISTORY_RUNS = 60  # runs the History section shows
# Marts the report prints as they are (identifiers from this fixed list only). Each is sorted by its grain (its
# header's, less run_id; a whole-run row, iteration NULL, before the iterations), unless given here.
REPORT_MARTS = ("verdicts", "capacity", "client_server_gap", "conclusions", "host_iteration_stats",
                "jvm_iteration_stats", "container_stats", "host_network_stats", "host_disk_stats", "process_stats",
                "health_findings", "iteration_hooks", "soak_drift")
MART_ORDER = {
    "capacity": "side, series_order(series), series",  # sizes 7, 1024, 102400: by value, not as text
    "conclusions": "sort_order, case when topic = 'capacity' then side end, subject like '% caution', "
                   "series_order(subject), subject",
    "health_findings": "severity = 'ok', severity = 'warn', host, iteration nulls last, rule",
}


def mart_order(mart: str) -> str:
    """The order the report prints a mart in: MART_ORDER's, else its grain's."""
    if mart in MART_ORDER:
        return MART_ORDER[mart]
    return ", ".join(f"{column} nulls first" for column in load_models()[mart].header.grain if column != "run_id")


class ReportError(RuntimeError):
    """The report cannot be made (for example: no such run in the warehouse)."""


@dataclass
class ReportData:
    """One run's figures, as DataFrames named after the mart or query they come from."""

    run: dict[str, Any]
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    baseline: str | None = None
    baseline_note: str | None = None  # why there is no comparison although a baseline was named
    comparison: list = field(default_factory=list)  # tasks.report.compare.MetricChange
    requirement_changes: list = field(default_factory=list)  # tasks.report.compare.RequirementChange
    host_changes: list = field(default_factory=list)  # tasks.report.compare_hosts.HostChange
    expectations: pd.DataFrame | None = None  # None: the warehouse has no expectation_results table
    validation: dict[str, Any] | None = None  # the run's row of `validations`, when there is one
    validation_page: str | None = None

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.frames[name]


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: dict) -> pd.DataFrame:
    return con.execute(sql, params).df()


def _columns(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    query = ("select column_name from duckdb_columns() where table_name = $name and database_name = current_database() "
             "order by column_index")
    return [row[0] for row in con.execute(query, {"name": name}).fetchall()]


def _expectations(con: duckdb.DuckDBPyConnection, run_id: str) -> pd.DataFrame | None:
    """The run's rows of `expectation_results`, whatever its columns; None when the table does not exist."""
    if not warehouse_has(con, "expectation_results"):
        return None
    if "run_id" not in _columns(con, "expectation_results"):
        return pd.DataFrame()
    frame = _frame(con, "select * from expectation_results where run_id = $run_id", {"run_id": run_id})
    return frame.drop(columns=["run_id"])


def _validation(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any] | None:
    """The run's row of `validations` (outcome and page of the last validation), None without one."""
    if not warehouse_has(con, "validations") or "run_id" not in _columns(con, "validations"):
        return None
    cursor = con.execute("select * from validations where run_id = $run_id", {"run_id": run_id})
    row = cursor.fetchone()
    return dict(zip([d[0] for d in cursor.description], row)) if row else None


def default_baseline(con: duckdb.DuckDBPyConnection, run_id: str, run: dict[str, Any]) -> str | None:
    """The run named by the `baseline` label, else the latest earlier passing run of the same campaign: of the
    run's current segment when the campaign has a history."""
    labels = run.get("labels") or {}
    named = labels.get("baseline") if isinstance(labels, dict) else None
    if named:
        return named
    anywhere = {"not_before": None, "comparable": None}
    segment = anywhere
    if _has_history(con):  # the latest earlier run of the run's current segment (docs/history.md)
        cursor = con.execute(model_sql("reports/report_segment"), {"run_id": run_id})
        segment = dict(zip([d[0] for d in cursor.description], cursor.fetchone()))
    row = con.execute(model_sql("reports/report_baseline"), {"run_id": run_id, **segment}).fetchone()
    if row is None and segment is not anywhere:  # no earlier run of its plan: any earlier passing run
        row = con.execute(model_sql("reports/report_baseline"), {"run_id": run_id, **anywhere}).fetchone()
    return row[0] if row else None


def _has_history(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the warehouse has the history's tables (one written before them has not)."""
    return warehouse_has(con, "series_values") and warehouse_has(con, "change_points")


def load_report_data(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    baseline: str | None = None,
    compare: bool = True,
    validation_page: str | None = None,
) -> ReportData:
    """Read one run's report figures; compare with `baseline` (or the default one) when `compare`."""
    params = {"run_id": run_id}
    cursor = con.execute(model_sql("reports/report_run"), params)
    row = cursor.fetchone()
    if row is None:
        raise ReportError(f"no run {run_id!r} in the warehouse (see `perfcampaign runs`)")
    run = dict(zip([d[0] for d in cursor.description], row))
    run["verdict"] = con.execute(model_sql("reports/run_verdict"), params).fetchone()[0]
    data = ReportData(run=run, validation_page=validation_page)
    for name in ("report_iterations", "report_iteration_table", "report_status_table", "report_minutes",
                 "report_host_samples", "report_background_stats", "report_soak", "report_soak_windows",
                 "report_soak_summary", "report_soak_hosts", "report_offered", "report_jmeter_summary"):
        data.frames[name] = _frame(con, model_sql(f"reports/{name}"), params)
    # the background load's rate check, as the data expectations run it
    data.frames["background_rate"] = _frame(con, model_sql("checks/chk_background_load"), params)
    run["background_rate_tolerance_pct"] = run_thresholds(con, run_id)["background_rate_tolerance_pct"]
    data.frames["report_label_stats"] = _frame(
        con, model_sql("reports/report_label_stats"), {**params, "max_labels": MAX_LABELS})
    for mart in REPORT_MARTS:
        data.frames[mart] = _frame(con, f"select * from {mart} where run_id = $run_id order by {mart_order(mart)}",
                                   params) \
            if warehouse_has(con, mart) else pd.DataFrame()
    history = _has_history(con)
    for name in ("report_history", "report_changes", "report_events"):
        data.frames[name] = _frame(con, model_sql(f"reports/{name}"), {**params, "last_runs": HISTORY_RUNS}) \
            if history else pd.DataFrame()
    data.expectations = _expectations(con, run_id)
    data.validation = _validation(con, run_id)
    data.frames["clock_skew"] = (
        _frame(con, "select * from clock_skew where run_id = $run_id order by host", params)
        if warehouse_has(con, "clock_skew") else pd.DataFrame()
    )
    if data.validation_page is None and data.validation and data.validation.get("page_path"):
        data.validation_page = data.validation["page_path"]
    if compare:
        _compare_with_baseline(con, data, baseline)
    return data


def _compare_with_baseline(con: duckdb.DuckDBPyConnection, data: ReportData, named: str | None) -> None:
    """Fill the comparison with the named baseline, else the run's default one (when there is one)."""
    run_id = data.run["run_id"]
    baseline = named or default_baseline(con, run_id, data.run)
    if baseline is None:
        return
    if not con.execute("select count(*) from runs where run_id = $b", {"b": baseline}).fetchone()[0]:
        if named:
            raise ReportError(f"baseline {baseline!r} is not in the warehouse (see `perfcampaign runs`)")
        data.baseline_note = f"The run names the baseline {baseline}, which is not in the warehouse."
        return
    data.baseline = baseline
    data.comparison = compare_runs(con, baseline, run_id, max_labels=MAX_LABELS)
    data.requirement_changes = requirement_changes(con, baseline, run_id, data.comparison)
    data.host_changes = compare_hosts(con, baseline, run_id)
