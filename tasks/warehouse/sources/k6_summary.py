"""Reader for k6's end-of-test summary (`kind: k6_summary`): not requests, but kept and checked against them.

Two shapes are read: `k6 run --summary-export FILE` (`{"metrics": {"http_reqs": {"count": .., "rate": ..},
"http_req_failed": {"passes": .., "fails": .., "value": ..}, ...}}`) and the data handed to
`handleSummary()` written with `JSON.stringify` (the same stats one level down, in `"values"`). A rate
metric counts its TRUE values as `passes`, so for http_req_failed `passes` are the FAILED requests; its
rate is `value` in the export and `rate` in handleSummary data (and a threshold `true` in the export means
the threshold FAILED).

The comparison needs every request source of the bundle loaded, whatever the manifest's order, so the
reader only parses the file and hands the comparison to the ingest as `after_all`.
"""

from __future__ import annotations

import json

from tasks.bundle.files import open_text
from tasks.bundle.k6_summary import PERCENTILE, parse_summary
from tasks.warehouse.models import build_model
from tasks.warehouse.sources.base import SourceContext, SourceError, SourceResult

# Relative tolerance for averages, extremes and quantiles; counts must be equal. k6 <= 1.1 keeps every
# value and interpolates percentiles linearly, so its summary matches the raw points to ~1e-15. A k6 that
# approximates (an HDR histogram) needs a looser `tolerance` option on the source.
DEFAULT_TOLERANCE = 1e-6
def _probability(metric: str) -> float | None:
    stat = metric.split(".", 1)[1]
    if stat == "med":
        return 0.5
    match = PERCENTILE.match(stat)
    return float(match.group(1)) / 100 if match else None


def read_k6_summary(ctx: SourceContext) -> SourceResult:
    """Parse one summary; its comparison with the raw points runs once every source is loaded."""
    try:
        with open_text(ctx.file) as handle:
            values = parse_summary(json.load(handle))
    except ValueError as exc:
        raise SourceError(f"{ctx.field}: not a k6 summary: {exc}") from None
    if not values:
        raise SourceError(f"{ctx.field}: the k6 summary has none of http_reqs, http_req_duration, http_req_failed")
    tolerance = ctx.option("tolerance", DEFAULT_TOLERANCE)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or tolerance < 0:
        raise SourceError(f"{ctx.field}.tolerance: expected a relative tolerance >= 0 (e.g. 0.01), got {tolerance!r}")
    return SourceResult(rows=len(values), after_all=lambda: compare_summary(ctx, values, float(tolerance)))


def compare_summary(ctx: SourceContext, values: dict[str, float], tolerance: float) -> tuple[str, ...]:
    """Write one k6_summary_checks row per metric; return one sentence per disagreement."""
    quantiles = {}
    for metric in values:
        probability = _probability(metric) if metric.startswith("http_req_duration.") else None
        if probability is not None:
            quantiles[metric] = probability
    quantiles = quantiles or {"http_req_duration.med": 0.5}  # quantile_cont needs a non-empty list
    params = {
        "run_id": ctx.manifest.run_id,
        "host": ctx.source.host,
        "path": ctx.source.path,
        "iteration": ctx.source.iteration,
    }
    build_model(
        ctx.con,
        "k6_summary_checks",
        {
            **params,
            "metrics": list(values),
            "summary_values": list(values.values()),
            "quantile_metrics": list(quantiles),
            "probabilities": list(quantiles.values()),
            "rel_tolerance": tolerance,
        },
    )
    rows = ctx.con.execute(
        "select metric, summary_value, points_value, agrees from k6_summary_checks "
        "where run_id = $run_id and host = $host and path = $path "
        "and iteration is not distinct from $iteration::integer order by metric <> 'http_reqs.count', metric",
        params,
    ).fetchall()
    scope = f"iteration {ctx.source.iteration}" if ctx.source.iteration is not None else ctx.source.path
    if rows and all(agrees is None for *_, agrees in rows):
        return (
            f"k6 summary of {scope} on {ctx.source.host}: no k6_json or k6_csv source of the same host and "
            "iteration to compare it with",
        )
    return tuple(
        f"k6 summary of {scope} on {ctx.source.host} says {_disagreement(metric, said, got)}"
        for metric, said, got, agrees in rows
        if agrees is False
    )


def _disagreement(metric: str, said: float, got: float | None) -> str:
    if metric in ("http_reqs.count", "http_req_duration.count"):
        return f"{said:,.0f} requests, the raw points {_or_none(got, '{:,.0f}')}"
    if metric == "http_req_failed.passes":
        return f"{said:,.0f} failed requests, the raw points {_or_none(got, '{:,.0f}')}"
    if metric == "http_req_failed.rate":
        return f"{said:.3%} of requests failed, the raw points {_or_none(got, '{:.3%}')}"
    stat = metric.split(".", 1)[1]
    return f"http_req_duration {stat} is {said:,.3f} ms, the raw points {_or_none(got, '{:,.3f} ms')}"


def _or_none(value: float | None, template: str) -> str:
    return "give none" if value is None else template.format(value)
