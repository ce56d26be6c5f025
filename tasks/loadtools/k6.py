"""k6 on the generators: one `k6 run` per generator of a step (`nodes` of them, or all) and iteration, the
load split between them with execution segments."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from tasks.bundle.k6_summary import parse_summary
from tasks.loadtools.base import LoadTool, StepResult, step_variables


def execution_segments(count: int) -> list[list[str]]:
    """k6 flags that give generator i of `count` its share: `--execution-segment 1/3:2/3` and the sequence."""
    if count == 1:
        return [[]]
    cuts = [Fraction(i, count) for i in range(count + 1)]
    sequence = ",".join(str(cut) for cut in cuts)
    return [
        ["--execution-segment", f"{cuts[i]}:{cuts[i + 1]}", "--execution-segment-sequence", sequence]
        for i in range(count)
    ]


class K6Tool(LoadTool):
    """k6: exit code 99 (thresholds crossed) is a result, not a crash."""

    ok_exit_codes = (0, 99)
    result_files = (
        ("k6.json.gz", "k6-iter{index}.json.gz", "k6_json"),
        ("k6-summary.json", "k6-iter{index}-summary.json", "k6_summary"),
        ("{name}.log", "k6-iter{index}.log", None),
    )

    def commands(self, index: int, step: dict[str, Any]) -> dict[str, list[str]]:
        variables = {key.upper(): value for key, value in step_variables(step, self.spec).items()}
        variables.setdefault("DURATION", f"{self.spec.duration_s:g}s")
        env_flags = [flag for key, value in sorted(variables.items()) for flag in ("-e", f"{key}={value}")]
        generators = self.generators_for(step)
        segments = execution_segments(len(generators))
        return {
            generator: [
                # no REST API: a second k6 on the host (a background load) would find its port taken
                self.spec.binary or "k6", "run", "--quiet", "--no-usage-report", "--address", "",
                "--out", f"json={self.iteration_dir(index, generator)}/k6.json.gz",
                "--summary-export", f"{self.iteration_dir(index, generator)}/k6-summary.json",
                *segments[number], *env_flags, self.script_remote,
            ]
            for number, generator in enumerate(generators)
        }

    def summarize(self, index: int, step: dict[str, Any], seconds: float, bundle: Path,
                  sources: list[dict[str, Any]]) -> StepResult:
        summaries = [
            parse_summary(json.loads((bundle / s["path"]).read_text()))
            for s in sources if s["kind"] == "k6_summary"
        ]
        calls = sum(int(s.get("http_reqs.count", 0)) for s in summaries)
        errors = sum(int(s.get("http_req_failed.passes", 0)) for s in summaries)
        metrics: dict[str, float] = {"error_rate": errors / calls if calls else 0.0}
        if calls:
            # Across generators an average combines exactly; a percentile does not: take the worst one.
            metrics["avg_ms"] = sum(s.get("http_req_duration.avg", 0) * s.get("http_reqs.count", 0) for s in summaries) / calls
            for name, key in (("p90_ms", "p(90)"), ("p95_ms", "p(95)"), ("max_ms", "max")):
                values = [s[f"http_req_duration.{key}"] for s in summaries if f"http_req_duration.{key}" in s]
                if values:
                    metrics[name] = max(values)
        dropped = sum(int(s.get("dropped_iterations.count", 0)) for s in summaries)
        return StepResult(index, step, seconds, calls, errors, metrics, dropped)
