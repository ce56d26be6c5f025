"""Great Expectations, kept behind one function: run suites on pandas DataFrames, return plain outcomes.

GX's SQL data source does not work with DuckDB (FIELD-NOTES), so every suite validates a DataFrame
fetched from the warehouse. `import great_expectations` costs ~4 s: it happens here, on first use only.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pandas as pd

UNEXPECTED_ROWS_KEPT = 20  # rows of evidence kept per failed expectation
OBSERVED_ROWS_SHOWN = 3  # rows named in the one-line `observed` text
_BUILDING = threading.Lock()  # one build, also when a thread started it ahead (`prepare_context`)


@dataclass
class ExpectationOutcome:
    """One expectation evaluated on one run, in the shape `expectation_results` stores."""

    suite: str
    expectation: str
    expectation_type: str
    column: str | None
    severity: str
    success: bool
    observed: str
    details: dict[str, Any] = field(default_factory=dict)


@cache
def _dataframe_batches():
    """The batch definition every suite's DataFrame goes through, made once a process: an ephemeral GX context
    (no files, no analytics, no progress bars) with one pandas asset. GX writes its whole project config out
    (YAML) on every asset and batch definition added: one each per suite was 40 % of a validation's time."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    source = context.data_sources.add_pandas("warehouse")
    return source.add_dataframe_asset("run_rows").add_batch_definition_whole_dataframe("run")


def prepare_context() -> None:
    """Import Great Expectations and build the process's context now (~2-3 s on first use), e.g. in a thread
    while the run's bundle is loaded, so that the validation after it does not wait for them."""
    with _BUILDING:
        _dataframe_batches()


def run_suites(
    suites: list[tuple[dict[str, Any], pd.DataFrame]], parameters: dict[str, float]
) -> list[ExpectationOutcome]:
    """Validate each (suite definition, DataFrame) pair; `parameters` fill `{"$PARAMETER": name}` values."""
    import great_expectations as gx

    prepare_context()
    batch_definition = _dataframe_batches()
    outcomes: list[ExpectationOutcome] = []
    for definition, frame in suites:
        name = definition["name"]
        suite = gx.ExpectationSuite(name=name, expectations=definition["expectations"])
        keys = list(definition.get("meta", {}).get("key_columns", []))
        batch = batch_definition.get_batch(batch_parameters={"dataframe": frame})
        for expectation, config in zip(suite.expectations, definition["expectations"]):
            shown = keys + [c for c in config.get("meta", {}).get("show", []) if c not in keys]
            result = batch.validate(
                expectation,
                result_format={"result_format": "COMPLETE", "unexpected_index_column_names": shown},
                expectation_parameters=parameters,
            )
            outcomes.append(_outcome(name, config, shown, result.to_json_dict(), parameters))
    return outcomes


def _keys_first(row: dict[str, Any], shown: list[str]) -> dict[str, Any]:
    """An offending row with the key and shown columns first, then the tested value(s)."""
    return {**{c: row[c] for c in shown if c in row}, **{c: v for c, v in row.items() if c not in shown}}


def _outcome(
    suite: str, config: dict[str, Any], shown: list[str], result: dict[str, Any], parameters: dict[str, float]
) -> ExpectationOutcome:
    kwargs = config.get("kwargs", {})
    column = kwargs.get("column") or ", ".join(k for k in (kwargs.get("column_A"), kwargs.get("column_B")) if k) or None
    exception = result.get("exception_info") or {}
    body = result.get("result") or {}
    if exception.get("raised_exception"):
        observed = f"could not be evaluated: {exception.get('exception_message')}"
    else:
        observed = _observed(body, shown)
    rows = [_keys_first(row, shown) for row in (body.get("unexpected_index_list") or [])[:UNEXPECTED_ROWS_KEPT]]
    details = {
        "description": config.get("description"),
        "kwargs": _resolved(kwargs, parameters),
        "element_count": body.get("element_count"),
        "unexpected_count": body.get("unexpected_count"),
        "unexpected_rows": json.loads(json.dumps(rows, default=str)),
    }
    if exception.get("raised_exception"):
        details["exception"] = exception.get("exception_message")
    return ExpectationOutcome(
        suite=suite,
        expectation=config.get("meta", {}).get("id") or config["type"],
        expectation_type=config["type"],
        column=column,
        severity=str(config.get("severity", "critical")),
        success=bool(result.get("success")),
        observed=observed,
        details=details,
    )


def _resolved(kwargs: dict[str, Any], parameters: dict[str, float]) -> dict[str, Any]:
    """The expectation's arguments with `$PARAMETER` references replaced by the values used."""
    def value(item: Any) -> Any:
        if isinstance(item, dict) and "$PARAMETER" in item:
            return parameters.get(item["$PARAMETER"])
        return item

    return {key: value(item) for key, item in kwargs.items()}


def _describe_row(row: dict[str, Any]) -> str:
    return ", ".join(f"{key}={_short(value)}" for key, value in row.items())


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _observed(body: dict[str, Any], shown: list[str]) -> str:
    """One line: what the expectation saw, naming the first offending rows."""
    if "observed_value" in body:
        return f"observed {body['observed_value']}"
    total = body.get("element_count") or 0
    bad = body.get("unexpected_count") or 0
    if total == 0:
        return "no rows to check"
    if not bad:
        return f"all {total:,} rows as expected"
    rows = body.get("unexpected_index_list") or []
    named = "; ".join(_describe_row(_keys_first(row, shown)) for row in rows[:OBSERVED_ROWS_SHOWN])
    more = f"; and {bad - OBSERVED_ROWS_SHOWN} more" if bad > OBSERVED_ROWS_SHOWN else ""
    return f"{bad:,} of {total:,} rows unexpected: {named}{more}"
