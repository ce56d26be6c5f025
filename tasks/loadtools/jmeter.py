"""JMeter on the generators: `jmeter -n -t PLAN -l results.jtl -j jmeter.log -J<key>=<value>`.

A step `{nodes: 2, threads: 5}` runs the plan on the first two generators at once, each with the step's
variables as JMeter properties (`-Jthreads=5`, and always `-Jnodes=N`); the plan reads them with
`${__P(threads)}`. The step's window runs from JMeter's own test start to its last sample's end.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tasks.bundle.jmeter_summariser import parse_lines, test_start
from tasks.bundle.load import planned_shortfall
from tasks.bundle.load_window import LoadWindow
from tasks.loadtools.base import LoadTool, StepResult, step_variables


class JMeterTool(LoadTool):
    """Apache JMeter in non-GUI mode."""

    result_files = (
        ("results.jtl", "jmeter-iter{index}.jtl", "jtl"),
        ("jmeter.log", "jmeter-iter{index}.log", "jmeter_log"),
        ("{name}.log", "jmeter-iter{index}-console.log", None),
    )

    def commands(self, index: int, step: dict[str, Any]) -> dict[str, list[str]]:
        generators = self.generators_for(step)
        # `nodes` is always given: a plan shares its rate between the step's generators (rate / nodes each)
        variables = {**step_variables(step, self.spec), "nodes": str(len(generators))}
        properties = [f"-J{key}={value}" for key, value in sorted(variables.items())]
        return {
            generator: [
                self.spec.binary or "jmeter", "-n", "-t", self.script_remote,
                "-l", f"{self.iteration_dir(index, generator)}/results.jtl",
                "-j", f"{self.iteration_dir(index, generator)}/jmeter.log", *properties,
            ]
            for generator in generators
        }

    def load_window(self, bundle: Path, sources: list[dict[str, Any]]) -> LoadWindow:
        """From JMeter's own test start (its log's marker: where its summariser and a throughput timer's
        schedule start, after the JVM's start) to the last sample's end; the first sample's start without it."""
        window = super().load_window(bundle, sources)
        starts = [moment for source in sources if source["kind"] == "jmeter_log"
                  and (bundle / source["path"]).is_file() and (moment := test_start(bundle / source["path"]))]
        if window.calls and starts and min(starts) < window.first_start:
            window = replace(window, first_start=min(starts))
        return window

    def summarize(self, index: int, step: dict[str, Any], seconds: float, bundle: Path,
                  sources: list[dict[str, Any]]) -> StepResult:
        calls = errors = 0
        weighted = 0.0
        for source in (s for s in sources if s["kind"] == "jmeter_log"):
            rows, _ = parse_lines(bundle / source["path"])
            totals = [row for row in rows if row["kind"] == "="]
            if totals:  # the last `summary =` line covers the whole test
                calls += totals[-1]["samples"]
                errors += totals[-1]["errors"]
                weighted += totals[-1]["avg_ms"] * totals[-1]["samples"]
        metrics = {"error_rate": errors / calls if calls else 0.0}
        if calls:
            metrics["avg_ms"] = weighted / calls
        # a throughput timer's plan against what was sent, over the load's window (the summariser prints
        # whole seconds)
        dropped = planned_shortfall(step, calls, seconds) or 0
        return StepResult(index, step, seconds, calls, errors, metrics, int(dropped))
