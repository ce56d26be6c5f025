"""The report's words: the summary at the top, the Markdown for Prefect, the JSON for machines.

The sentences are the `conclusions` mart's own (numbers formatted there, once); the comparison sentence
quotes the comparison rows, whose values and % change come from the warehouse.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pandas as pd

from tasks.report import soak
from tasks.report.data import ReportData
from tasks.report.fmt import is_missing, markdown_safe, metric_unit, number, plain
from tasks.warehouse.verdicts import expectation_text, verdict_word

LATENCY = ("avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms")


def data_failed(data: ReportData) -> bool:
    """True when the run's last validation failed a critical expectation: no verdict of it is a pass."""
    return bool(data.validation) and data.validation.get("success") is False


def overall_verdict(data: ReportData) -> str:
    """RUN FAILED, RUN CANCELLED, DATA FAILED, FAIL, pass or not judged: `run_verdict` of the warehouse
    (sql/macros/run_verdict.sql), so the report never says pass where `perfcampaign runs` would not."""
    return data.run["verdict"]


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def comparison_sentence(data: ReportData) -> str | None:
    """What changed against the baseline beyond noise, with the largest such change."""
    if data.baseline is None:
        return None
    checks = [c for c in data.requirement_changes if c.before is not None and c.verdict != "not judged"]
    moved = [c for c in data.comparison if c.label == "(all)" and c.beyond_noise and c.change_pct is not None]
    if checks:
        counts = {verdict: sum(c.verdict == verdict for c in checks) for verdict in ("FAIL", "WORSE", "better", "same")}
        untested = len(checks) - sum(counts.values())  # no test for the metric (max_ms), or too few samples
        opening = (f"Against the baseline {data.baseline}, of {len(checks)} requirement checks at matching "
                   f"iterations: {_n(counts['FAIL'], 'now fails', 'now fail')}, "
                   f"{_n(counts['WORSE'], 'holds but is worse', 'hold but are worse')} beyond noise, "
                   f"{_n(counts['better'], 'is better', 'are better')}"
                   + (f", {_n(counts['same'], 'is', 'are')} within noise and {untested} untested" if untested
                      else f" and {_n(counts['same'], 'is', 'are')} within noise"))
    else:
        opening = f"Against the baseline {data.baseline}: {len(moved)} whole-side figures changed beyond noise"
    latency = [c for c in moved if c.metric in LATENCY]
    if not latency:
        return opening + "; no response time moved beyond noise."
    top = max(latency, key=lambda c: abs(c.change_pct))
    unit = metric_unit(top.metric)
    return (f"{opening}; the largest response-time change is {top.side} {top.metric.removesuffix('_ms')} at "
            f"iteration {top.iteration}, {number(top.a, unit)} before and {number(top.b, unit)} now "
            f"({number(top.change_pct, 'pct')}, {top.test} p {number(top.p_value, 'p')}).")


def data_sentences(data: ReportData) -> list[str]:
    """What the data checks say first: failed expectations by name, and clocks that were corrected."""
    sentences = []
    if data_failed(data):
        failed = list(data.validation.get("failed_expectations") or [])
        sentences.append(
            f"The data of this run failed {_n(len(failed), 'expectation', 'expectations')} "
            f"({', '.join(failed) or 'see the expectations section'}): the verdicts below are not a pass "
            "until the data is fixed."
        )
    skews = data.frames.get("clock_skew")
    if skews is not None and not skews.empty and "is_corrected" in skews.columns:
        for row in skews[skews["is_corrected"].astype(bool)].itertuples():
            sentences.append(
                f"The clock of {row.host} was {row.skew_s:+.1f} s off {row.reference_host}'s: its rows were "
                "placed in iterations by corrected time (times are shown as written)."
            )
    return sentences


def saturated(row: dict) -> bool | None:
    """A capacity row's `saturated` as True, False or None (no step could be judged)."""
    return None if is_missing(row["saturated"]) else bool(row["saturated"])


def _series_line(side: str, group: pd.DataFrame) -> str:
    """One line for a side with several series: which saturated and where, which did not, the highest."""
    knees = [f"iteration {int(r['knee_iteration'])} for {r['series']} ({number(r['knee_calls_per_s'], 'calls/s')})"
             for r in group.to_dict("records") if saturated(r) is True and not is_missing(r["knee_iteration"])]
    scaling = [r["series"] for r in group.to_dict("records") if saturated(r) is False]
    unjudged = len(group) - len(knees) - len(scaling)
    top = group.loc[group["max_calls_per_s"].idxmax()] if group["max_calls_per_s"].notna().any() else None
    said = [f"{_n(len(knees), 'series saturated', 'series saturated')}"
            + (f", the knee at {'; '.join(knees)}" if knees else "")]
    if scaling:
        said.append(f"no knee within the tested load for {', '.join(scaling)}")
    if unjudged:
        said.append(f"{unjudged} not judged")
    if top is not None:
        said.append(f"the highest throughput {number(top['max_calls_per_s'], 'calls/s')} at iteration "
                    f"{int(top['max_iteration'])} ({top['series']})")
    return f"Capacity, {side} side, {len(group)} series: " + "; ".join(said) + "."


def capacity_sentences(data: ReportData) -> list[str]:
    """Capacity in a few lines: a side with one series in its conclusions sentence, a side with several in one
    line (the series are the report's capacity table), then each side's caution once."""
    rows = data["conclusions"]
    rows = rows[rows["topic"] == "capacity"]
    capacity = data["capacity"]
    cautions = rows["subject"].str.endswith(" caution")
    said = []
    for side, group in capacity.groupby("side", sort=True) if not capacity.empty else ():
        if len(group) > 1:
            said.append(_series_line(side, group))
        else:
            said += list(rows[~cautions & (rows["side"] == side)]["sentence"])
    return said + list(rows[cautions]["sentence"])


def summary_sentences(data: ReportData) -> list[str]:
    """The short written summary: verdict, broken requirements, capacity, client/server gap, health, baseline."""
    rows = data["conclusions"]
    if rows.empty:
        return ["The warehouse has no conclusions for this run: re-ingest it to build them."]
    picked = rows[
        (rows["topic"] == "requirements")
        | ((rows["topic"] == "requirement") & (rows["status"] == "broken"))
    ]
    later = rows[(rows["topic"] == "client_server") | ((rows["topic"] == "health") & (rows["subject"] == "(all)"))]
    sentences = (data_sentences(data) + list(picked["sentence"]) + capacity_sentences(data)
                 + list(later["sentence"]))
    failures = rows[(rows["topic"] == "health") & (rows["status"] == "fail") & (rows["subject"] != "(all)")]
    if rows["subject"].str.endswith(" caution").any():  # the capacity caution said these once already
        failures = failures[~failures["subject"].str.contains("/loadgen_cpu/", regex=False)]
    sentences += list(failures["sentence"].head(3))
    if len(failures) > 3:
        sentences.append(f"{len(failures) - 3} more failed health checks: see Health findings.")
    sentences += soak.sentences(data)
    compared = comparison_sentence(data)
    if compared:
        sentences.append(compared)
    if data.expectations is not None and "success" in data.expectations.columns and not data.expectations.empty:
        failed = int((~data.expectations["success"].astype(bool)).sum())
        sentences.append(f"Data expectations: {len(data.expectations) - failed} of {len(data.expectations)} met.")
    return sentences


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if is_missing(v) else v) for k, v in row.items()} for row in frame.to_dict("records")] \
        if not frame.empty else []


def summary_json(data: ReportData, files: dict[str, str]) -> str:
    """The machine-readable summary: verdict, sentences, requirements, capacity, comparison, files."""
    verdicts = data["verdicts"]
    payload = {
        "run_id": data.run["run_id"],
        "campaign": data.run["campaign"],
        "scenario": data.run["scenario"],
        "status": data.run["status"],
        "verdict": overall_verdict(data),
        "summary": summary_sentences(data),
        "requirements": _records(verdicts[verdicts["iteration"].isna()].drop(columns=["run_id"])),
        "verdicts": _records(verdicts[verdicts["iteration"].notna()].drop(columns=["run_id"])),
        "capacity": _records(data["capacity"].drop(columns=["run_id"], errors="ignore")),
        "client_server_gap": _records(data["client_server_gap"].drop(columns=["run_id"], errors="ignore")),
        "conclusions": _records(data["conclusions"].drop(columns=["run_id"], errors="ignore")),
        "soak_drift": _records(data.frames.get("soak_drift", pd.DataFrame()).drop(columns=["run_id"], errors="ignore")),
        "baseline": data.baseline,
        "comparison": {
            "requirements": [asdict(c) for c in data.requirement_changes],
            "metrics": [asdict(c) for c in data.comparison],
            "hosts": [asdict(c) for c in data.host_changes],
        },
        "expectations": None if data.expectations is None else _records(data.expectations),
        "files": files,
    }
    return json.dumps(payload, indent=1, default=_json_default)


def _json_default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    return str(value)


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: list[str], rows: list[list[Any]]) -> str:
    """A GitHub-flavoured Markdown table of already formatted cells."""
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def summary_markdown(data: ReportData, report_uri: str | None = None) -> str:
    """The Markdown artifact: the summary, the requirements, the capacity and the baseline table."""
    run = data.run
    lines = [f"# Report: `{run['run_id']}` — {overall_verdict(data)}", ""]
    lines += [f"- {sentence}" for sentence in summary_sentences(data)]
    whole = data["verdicts"][data["verdicts"]["iteration"].isna()]
    if not whole.empty:
        lines += ["", "## Requirements", "", markdown_table(
            ["requirement", "rule", "worst", "verdict", "margin", "holds up to"],
            [[r["requirement_id"], r["rule"],
              number(r["measured"], metric_unit(r["metric"])),
              "; ".join(filter(None, [verdict_word(r["passed"], "markdown"), expectation_text(
                  None if is_missing(r["expect"]) else f"{r['op']} {r['expect']:g}", r["expect_passed"], "markdown")])),
              number(r["margin_pct"], "%"),
              "" if is_missing(r["holds_up_to_iteration"]) else
              f"iteration {int(r['holds_up_to_iteration'])}, {number(r['holds_up_to_calls_per_s'], 'calls/s')}"]
             for r in whole.to_dict("records")])]
    if not data.frames.get("soak_drift", pd.DataFrame()).empty:
        lines += ["", "## Soak drift", "", markdown_table(soak.DRIFT_COLUMNS, soak.drift_rows(data))]
    if data.requirement_changes:
        lines += ["", f"## Against the baseline `{data.baseline}`", "", changes_markdown(data)]
    if report_uri:
        lines += ["", f"Full report: {report_uri}"]
    return markdown_safe("\n".join(lines))


def changes_markdown(data: ReportData) -> str:
    """The comparison in the form users publish."""
    return markdown_table(
        ["test", "unit", "requirement", "expectation", "before", "after", "% change", "verdict"],
        [[c.test, c.unit, c.requirement, c.expectation, plain(c.before, c.unit), plain(c.after, c.unit),
          number(c.change_pct, "pct"), c.verdict]
         for c in data.requirement_changes])
