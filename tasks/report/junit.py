"""JUnit XML of a run's verdicts for CI systems: the run itself, then one testcase per requirement and iteration.

The run's own testcase fails when the run failed, was cancelled or its data failed a critical expectation.
Each regression event the run's history analysis found first (untriaged) is one more failing testcase.

A broken requirement is a `failure` (RequirementBroken), a missed expectation (`expect`, the spec holding)
a failure of type ExpectationMissed; an iteration where it was not judged is `skipped`, with the verdicts'
reason (`judged_by`). The messages quote the rule, the measured value and the margin.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tasks.bundle.printable import printable
from tasks.report.data import ReportData
from tasks.report.fmt import is_missing, metric_unit, number


def junit_xml(data: ReportData) -> str:
    """The verdicts of `data` as a JUnit `<testsuites>` document."""
    run = data.run
    verdicts = data["verdicts"]
    per_iteration = verdicts[verdicts["iteration"].notna()] if not verdicts.empty else verdicts
    iterations = data["report_iterations"]
    loads = dict(zip(iterations["iteration"], iterations["load"]))
    seconds = dict(zip(iterations["iteration"], iterations["duration_s"]))
    suite = ET.Element("testsuite", name=f"perfcampaign.{run['campaign']}", hostname="perfcampaign")
    counts = {"tests": 1, "failures": 0, "skipped": 0}
    run_case = ET.SubElement(suite, "testcase", classname=f"{run['run_id']}.run", name="run verdict")
    if run["verdict"] in ("RUN FAILED", "RUN CANCELLED", "DATA FAILED"):
        message = f"{run['verdict']}: {run['status_reason'] or 'a critical data expectation failed'}"
        ET.SubElement(run_case, "failure", message=message, type="RunNotValid").text = message
        counts["failures"] += 1
    for row in per_iteration.to_dict("records"):
        iteration = int(row["iteration"])
        case = ET.SubElement(suite, "testcase", classname=f"{run['run_id']}.{row['requirement_id']}",
                             name=f"iteration {iteration} ({loads.get(iteration, '')})",
                             time=f"{seconds.get(iteration, 0):.3f}")
        counts["tests"] += 1
        outcome = _outcome(row)
        if outcome is None:
            ET.SubElement(case, "system-out").text = _measured(row, row["rule"])
        elif outcome[0] == "skipped":
            ET.SubElement(case, "skipped", message=outcome[1])
            counts["skipped"] += 1
        else:
            ET.SubElement(case, "failure", message=outcome[1], type=outcome[0]).text = outcome[1]
            counts["failures"] += 1
    for event in _new_regressions(data):
        case = ET.SubElement(suite, "testcase", classname=f"{run['run_id']}.history",
                             name=f"{event['sides']}: {event['metrics']} at {event['run_id']} ({event['event_id']})")
        message = (f"regression of {event['series']} series, median {number(event['change_pct'], 'pct')} (largest "
                   f"{number(event['largest_change_pct'], 'pct')}) at {event['run_id']}"
                   + (f" ({event['label_changes']})" if not is_missing(event["label_changes"]) else "")
                   + f"; triage with `perfcampaign triage {event['event_id']}`")
        ET.SubElement(case, "failure", message=message, type="Regression").text = \
            message + "\n" + "\n".join(event["series_keys"])
        counts["tests"] += 1
        counts["failures"] += 1
    for name, value in counts.items():
        suite.set(name, str(value))
    suite.set("errors", "0")
    root = ET.Element("testsuites", name=run["run_id"], **{k: suite.get(k) for k in ("tests", "failures", "skipped")})
    root.append(suite)
    for element in root.iter():  # XML 1.0 forbids most control characters: a reason's ESC shown as \x1b
        element.text = element.text and printable(element.text, keep_lines=True)
        element.attrib = {key: printable(value, keep_lines=True) for key, value in element.attrib.items()}
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _measured(row: dict, rule: str, margin: str = "") -> str:
    unit = metric_unit(row["metric"])
    text = f"{rule}: measured {number(row['measured'], unit)} at {number(row['calls_per_s'], 'calls/s')}"
    return text + (f" (margin {number(row[margin], '%')})" if margin else "")


def _outcome(row: dict) -> tuple[str, str] | None:
    """(`skipped` or the failure type, message) of one requirement at one iteration, None when it holds.

    A skipped iteration quotes the verdicts' own reason (`judged_by`: "load is not rate_per_s=20"); the spec
    (`rule`) is judged first, then the current expectation (`expect_rule`), each a failure of its own type."""
    if is_missing(row["passed"]):
        return "skipped", f"not judged: {row['judged_by']}"
    if not row["passed"]:
        return "RequirementBroken", _measured(row, row["rule"], "margin_pct")
    if not is_missing(row["expect_passed"]) and not row["expect_passed"]:
        return "ExpectationMissed", "expectation missed: " + _measured(row, row["expect_rule"], "expect_margin_pct")
    return None


def _new_regressions(data: ReportData) -> list[dict]:
    """The untriaged regression events the run's history analysis found first (report_events.is_new_here)."""
    changes = data.frames.get("report_events")
    if changes is None or changes.empty:
        return []
    return changes[changes["is_new_here"]].to_dict("records")
