"""A requirement's whole-run verdict as a named row, and the one wording of a verdict every output uses."""

from __future__ import annotations

import math
from dataclasses import dataclass

import duckdb

from tasks.warehouse.models import model_sql

BROKEN = {"plain": "broken", "shout": "BROKEN", "markdown": "**BROKEN**"}  # where a breach must stand out
MISSED = {"plain": "missed", "shout": "MISSED", "markdown": "**MISSED**"}  # a current expectation not met


def verdict_word(passed: bool | float | None, style: str = "plain") -> str:
    """`holds`, `not judged` (no data, or under the requirement's load), or broken in the `style` of the output."""
    if passed is None or (isinstance(passed, float) and math.isnan(passed)):
        return "not judged"
    return "holds" if passed else BROKEN[style]


def expectation_text(expect_rule: str | None, met: bool | float | None, style: str = "plain") -> str:
    """A requirement's current expectation and whether it was met ("expectation server p95_ms < 200: MISSED"),
    '' when it has none; a missed expectation stands out in `style` as a broken spec does."""
    if expect_rule is None or (isinstance(expect_rule, float) and math.isnan(expect_rule)):
        return ""
    word = verdict_word(met, style)
    return f"expectation {expect_rule}: " + ("met" if word == "holds" else MISSED[style] if word == BROKEN[style] else word)


@dataclass(frozen=True)
class Verdict:
    """One requirement over the whole run (the `verdicts` row with iteration NULL)."""

    requirement_id: str
    rule: str  # "server p95_ms < 500 (label /api/pull*)": the verdicts mart's one wording
    measured: float | None
    passed: bool | None
    holds_up_to_iteration: int | None
    holds_up_to_calls_per_s: float | None
    expect_rule: str | None = None  # the current expectation, worded as `rule`; None without one
    expect_passed: bool | None = None

    @property
    def reach(self) -> str:
        """Up to which load it holds, '' when it never held."""
        if self.holds_up_to_iteration is None:
            return ""
        return f"iteration {self.holds_up_to_iteration} ({self.holds_up_to_calls_per_s:.1f} calls/s)"


def run_verdicts(con: duckdb.DuckDBPyConnection, run_id: str) -> list[Verdict]:
    """Every requirement's whole-run verdict of one run, by requirement id."""
    return [Verdict(*row) for row in con.execute(model_sql("reports/run_verdicts"), {"run_id": run_id}).fetchall()]


def verdicts_markdown(verdicts: list[Verdict]) -> str:
    """The requirements as a Markdown table (Prefect artifacts, the campaign's summary)."""
    rows = ["| requirement | rule | worst | verdict | holds up to |", "| --- | --- | ---: | --- | --- |"]
    for v in verdicts:
        worst = "" if v.measured is None else f"{v.measured:.4g}"
        verdict = "; ".join(filter(None, [verdict_word(v.passed, "markdown"),
                                          expectation_text(v.expect_rule, v.expect_passed, "markdown")]))
        rows.append(f"| {v.requirement_id} | {v.rule} | {worst} | {verdict} | {v.reach} |")
    return "\n".join(rows)
