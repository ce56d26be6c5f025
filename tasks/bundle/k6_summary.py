"""k6's end-of-test summary as numbers: both shapes k6 writes (`--summary-export`, `handleSummary` data).

A rate metric counts its TRUE values as `passes`, so for http_req_failed `passes` are the FAILED
requests; its rate is `value` in the export and `rate` in handleSummary data. The load tool reads it to
judge a step, the warehouse to check it against the raw points.
"""

from __future__ import annotations

import re

DURATION_STATS = ("avg", "min", "max", "med", "count")
PERCENTILE = re.compile(r"^p\((\d+(?:\.\d+)?)\)$")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _stats(metrics: dict, name: str) -> dict:
    entry = metrics.get(name)
    if not isinstance(entry, dict):
        return {}
    return entry["values"] if isinstance(entry.get("values"), dict) else entry


def parse_summary(data: object) -> dict[str, float]:
    """Flatten either summary shape to `{"http_reqs.count": 2184.0, "http_req_duration.p(95)": 50.2, ...}`."""
    metrics = data.get("metrics") if isinstance(data, dict) else None
    if not isinstance(metrics, dict):
        raise ValueError("no top-level `metrics` object (expected --summary-export or handleSummary JSON)")
    found: dict[str, object] = {"http_reqs.count": _stats(metrics, "http_reqs").get("count")}
    for stat, value in _stats(metrics, "http_req_duration").items():
        if stat in DURATION_STATS or PERCENTILE.match(stat):
            found[f"http_req_duration.{stat}"] = value
    failed = _stats(metrics, "http_req_failed")
    found["http_req_failed.rate"] = failed.get("rate", failed.get("value"))
    found["http_req_failed.passes"] = failed.get("passes")
    found["dropped_iterations.count"] = _stats(metrics, "dropped_iterations").get("count")
    values = {metric: _number(value) for metric, value in found.items()}
    return {metric: value for metric, value in values.items() if value is not None}
