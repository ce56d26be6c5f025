"""Validate a run's data with the expectation suites in `expectations/` and store the results.

Runs after the ingest, on what the warehouse holds: each suite names a check query in `sql/checks/`
whose rows (fetched as a DataFrame) its expectations test; thresholds come from the run's manifest.
Results replace the run's earlier ones in `expectation_results`, and `validations` says whether the
run's data passed: `success` is false when any expectation of severity `critical` failed (`warning`
ones, such as a clock skew that was corrected, are listed but do not fail the run). The marts are built
by the ingest, before any validation: readers that need the verdict (the report) read `validations`.
"""

from __future__ import annotations

import json
import re
import time
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from tasks.bundle.thresholds import THRESHOLDS
from tasks.settings import EXPECTATIONS_DIR, VALIDATION_PAGE
from tasks.validate.gx import ExpectationOutcome, run_suites
from tasks.validate.page import write_validation_page
from tasks.warehouse.connection import open_warehouse, transaction
from tasks.warehouse.engines import Lake, parse_warehouse
from tasks.warehouse.models import model_sql

# Manifest thresholds the suites and check queries read (defaults: tasks/bundle/thresholds.py).
VALIDATION_THRESHOLDS = ("clock_skew_max_s", "run_margin_s", "background_rate_tolerance_pct")
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class ValidationError(RuntimeError):
    """A run that cannot be validated (not in the warehouse, or a suite file that cannot be used)."""


@dataclass
class ValidationSummary:
    """What a validation found, for the terminal, flows and the report."""

    run_id: str
    success: bool
    evaluated: int
    failed: list[str] = field(default_factory=list)  # "suite.expectation: observed" of failed critical ones
    warnings: list[str] = field(default_factory=list)  # the same for failed warnings
    outcomes: list[ExpectationOutcome] = field(default_factory=list)
    page: Path | None = None
    validated_at: datetime | None = None
    seconds: float = 0.0

    def markdown(self) -> str:
        """A short Markdown account: the verdict, then every failed expectation."""
        verdict = "**passes**" if self.success else "**FAILS**"
        lines = [f"Data of run `{self.run_id}` {verdict} its expectations "
                 f"({self.evaluated} evaluated, {len(self.failed)} failed, {len(self.warnings)} warnings)."]
        lines += [f"- failed: {item}" for item in self.failed]
        lines += [f"- warning: {item}" for item in self.warnings]
        if self.page:
            lines.append(f"\nValidation page: {self.page}")
        return "\n".join(lines)


def load_suites(folder: Path = EXPECTATIONS_DIR) -> list[dict[str, Any]]:
    """Every suite file (`*.json`, GX suite format with `meta.check` naming its query), in name order."""
    suites = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            suite = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ValidationError(f"{path}: not valid JSON: {exc}") from None
        check = suite.get("meta", {}).get("check") if isinstance(suite, dict) else None
        if not check or not suite.get("name") or not isinstance(suite.get("expectations"), list):
            raise ValidationError(f"{path}: expected a suite with name, expectations and meta.check (a sql/checks query)")
        suites.append(suite)
    return suites


def run_thresholds(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, float]:
    """The run's manifest thresholds the validation uses, defaults filled in; raises if the run is unknown."""
    row = con.execute("select manifest from runs where run_id = $run_id", {"run_id": run_id}).fetchone()
    if row is None:
        raise ValidationError(f"no run {run_id!r} in the warehouse (see `perfcampaign runs`)")
    given = (json.loads(row[0]) if row[0] else {}).get("thresholds") or {}
    return {name: float(given.get(name, THRESHOLDS[name])) for name in VALIDATION_THRESHOLDS}


def fetch_check(con: duckdb.DuckDBPyConnection, check: str, params: dict[str, Any]) -> pd.DataFrame:
    """The rows of `sql/checks/<check>.sql` as a DataFrame, bound to the parameters it uses."""
    sql = model_sql(f"checks/{check}")
    code = "\n".join(line.split("--", 1)[0] for line in sql.splitlines())
    used = set(_PARAMETER.findall(code))
    missing = used - set(params)
    if missing:
        raise ValidationError(f"sql/checks/{check}.sql needs parameters {', '.join(sorted(missing))}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas 3 deprecation warnings from inside duckdb's .df()
        return con.execute(sql, {name: params[name] for name in used}).df()


def _store(con: duckdb.DuckDBPyConnection, summary: ValidationSummary) -> None:
    params = {"run_id": summary.run_id}
    con.execute("delete from expectation_results where run_id = $run_id", params)
    con.execute("delete from validations where run_id = $run_id", params)
    con.executemany(
        "insert into expectation_results values ($run_id, $suite, $expectation, $type, $column, $severity, "
        "$success, $observed, $details, $at)",
        [
            {
                "run_id": summary.run_id, "suite": o.suite, "expectation": o.expectation, "type": o.expectation_type,
                "column": o.column, "severity": o.severity, "success": o.success, "observed": o.observed,
                "details": json.dumps(o.details, default=str), "at": summary.validated_at,
            }
            for o in summary.outcomes
        ],
    )
    con.execute(
        "insert into validations values ($run_id, $at, $success, $evaluated, $failed, $warnings, $page)",
        {
            "run_id": summary.run_id, "at": summary.validated_at, "success": summary.success,
            "evaluated": summary.evaluated,
            "failed": [f"{o.suite}.{o.expectation}" for o in summary.outcomes if not o.success and o.severity == "critical"],
            "warnings": [f"{o.suite}.{o.expectation}" for o in summary.outcomes if not o.success and o.severity != "critical"],
            "page": str(summary.page) if summary.page else None,
        },
    )


def _summarise(run_id: str, outcomes: list[ExpectationOutcome]) -> ValidationSummary:
    failed = [o for o in outcomes if not o.success]
    critical = [o for o in failed if o.severity == "critical"]
    others = [o for o in failed if o.severity != "critical"]
    return ValidationSummary(
        run_id=run_id,
        success=not critical,
        evaluated=len(outcomes),
        failed=[f"{o.suite}.{o.expectation}: {o.observed}" for o in critical],
        warnings=[f"{o.suite}.{o.expectation}: {o.observed}" for o in others],
        outcomes=outcomes,
        validated_at=datetime.now(timezone.utc),
    )


def validate_run(warehouse: Path | Lake, run_id: str, out_dir: Path | None = None) -> ValidationSummary:
    """Run every suite on one run, store the results, and write the validation page into `out_dir`."""
    started = time.perf_counter()
    if not parse_warehouse(warehouse).exists():  # opening it for writing would create an empty one
        raise ValidationError(f"no warehouse at {warehouse}: load a bundle first with `perfcampaign ingest BUNDLE`")
    suites = load_suites()
    with open_warehouse(parse_warehouse(warehouse), write=True) as con:
        thresholds = run_thresholds(con, run_id)
        params = {"run_id": run_id, **thresholds}
        frames = [(suite, fetch_check(con, suite["meta"]["check"], params)) for suite in suites]
        summary = _summarise(run_id, run_suites(frames, thresholds))
        if out_dir is not None:
            summary.page = Path(out_dir).resolve() / VALIDATION_PAGE
        with transaction(con):
            _store(con, summary)
            if summary.page is not None:

                write_validation_page(con, run_id, summary.page)
    summary.seconds = time.perf_counter() - started
    return summary
