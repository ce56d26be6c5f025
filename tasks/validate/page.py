"""The validation page of a run: one self-contained HTML file (no scripts, no external files).

Built from what the warehouse stores (`validations`, `expectation_results`, `clock_skew`), so the report
can write it beside itself from a read-only connection: `write_validation_page(con, run_id, path)`.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import duckdb

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:75em}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}.pass{color:#17662b}.fail{color:#b00020;font-weight:bold}.warning{color:#a15c00;font-weight:bold}
.verdict{padding:.6em 1em;border-radius:4px;display:inline-block}
.verdict.pass{background:#e6f4ea}.verdict.fail{background:#fde7e9}
.muted{color:#666;font-size:.9em}td.num{text-align:right}
"""


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return escape(f"{value:.6g}")
    return escape(str(value))


def _table(columns: list[str], rows: list[tuple]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _status(success: bool, severity: str) -> str:
    if success:
        return '<span class="pass">pass</span>'
    if severity == "critical":
        return '<span class="fail">FAIL</span>'
    return f'<span class="warning">{escape(severity)}</span>'


def _evidence(details: dict) -> str:
    rows = details.get("unexpected_rows") or []
    if not rows:
        return ""
    columns = list(rows[0])
    note = ""
    if (details.get("unexpected_count") or 0) > len(rows):
        note = f'<div class="muted">first {len(rows)} of {details["unexpected_count"]:,} rows</div>'
    return _table(columns, [tuple(row.get(c) for c in columns) for row in rows]) + note


def _suite_section(suite: str, rows: list[tuple]) -> str:
    parts = [f"<h2>{escape(suite)}</h2>", "<table><tr><th>expectation</th><th>result</th><th>column</th>"
             "<th>observed</th><th>what it means</th></tr>"]
    for expectation, severity, success, column, observed, details_json in rows:
        details = json.loads(details_json) if details_json else {}
        kwargs = {k: v for k, v in (details.get("kwargs") or {}).items() if k not in ("column", "column_A", "column_B")}
        rule = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        parts.append(
            f"<tr><td>{escape(expectation)}<div class=\"muted\">{escape(rule)}</div></td>"
            f"<td>{_status(success, severity)}</td><td>{_cell(column)}</td>"
            f"<td>{_cell(observed)}{_evidence(details) if not success else ''}</td>"
            f"<td>{_cell(details.get('description'))}</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def render_validation_page(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """The HTML text of a run's validation page (raises LookupError when the run was never validated)."""
    params = {"run_id": run_id}
    verdict = con.execute(
        "select validated_at, success, evaluated_expectations, failed_expectations, warnings "
        "from validations where run_id = $run_id", params
    ).fetchone()
    if verdict is None:
        raise LookupError(f"run {run_id!r} has not been validated (run `perfcampaign validate {run_id}`)")
    validated_at, success, evaluated, failed, warned = verdict
    results = con.execute(
        "select suite, expectation, severity, success, \"column\", observed, details::varchar "
        "from expectation_results where run_id = $run_id order by suite, expectation", params
    ).fetchall()
    clocks = con.execute(
        "select host, reference_host, skew_s, uncertainty_s, mismatch_share, as_written_mismatch, is_corrected, "
        "requests_replaced, samples_replaced, note from clock_skew where run_id = $run_id order by host", params
    ).fetchall()
    word = "passes" if success else "FAILS"
    summary = f"{evaluated} expectations evaluated, {len(failed)} failed, {len(warned)} warnings"
    parts = [
        f"<!doctype html><html><head><meta charset=\"utf-8\"><title>Data validation: {escape(run_id)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>Data validation of run <code>{escape(run_id)}</code></h1>",
        f'<p class="verdict {"pass" if success else "fail"}">The data {word} its expectations: {escape(summary)}.</p>',
        f'<p class="muted">validated at {escape(str(validated_at))}; suites in <code>expectations/</code>, '
        "check queries in <code>sql/checks/</code>.</p>",
    ]
    if failed:
        parts.append("<p>Failed: " + ", ".join(f"<code>{escape(f)}</code>" for f in failed) + "</p>")
    if warned:
        parts.append("<p>Warnings: " + ", ".join(f"<code>{escape(w)}</code>" for w in warned) + "</p>")
    parts.append("<h2>Clocks</h2>")
    if clocks:
        parts.append("<p class=\"muted\">Positive skew: the host's clock is ahead of the reference. A corrected host's "
                     "rows are placed in iterations by written time - skew; their times stay as written.</p>")
        parts.append(_table(["host", "reference", "skew_s", "uncertainty_s", "mismatch_share", "as written",
                             "corrected", "requests moved", "samples moved", "note"], clocks))
    else:
        parts.append("<p>No server-side requests: no clock to compare.</p>")
    by_suite: dict[str, list[tuple]] = {}
    for suite, *rest in results:
        by_suite.setdefault(suite, []).append(tuple(rest))
    parts += [_suite_section(suite, rows) for suite, rows in by_suite.items()]
    parts.append("</body></html>\n")
    return "".join(parts)


def write_validation_page(con: duckdb.DuckDBPyConnection, run_id: str, path: Path) -> Path:
    """Write the run's validation page to `path` (folders created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_validation_page(con, run_id), encoding="utf-8")
    return path
