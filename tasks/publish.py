"""After a run: keep the bundle in the store, then load it into the warehouse; say what happened either way."""

from __future__ import annotations

from tasks.bundle.manifest import ManifestError
from tasks.campaign.run import CampaignRun
from tasks.report.build import publish_run_report
from tasks.store.base import StoreError
from tasks.store.factory import open_store
from tasks.validate.run import validation_markdown
from tasks.warehouse.connection import warehouse_path
from tasks.warehouse.ingest import IngestReport, ingest_bundle


def store_and_ingest(run: CampaignRun, warehouse: str | None = None) -> str:
    """Store the bundle (verified), ingest it, and return a Markdown summary of the run.

    A store that stays unavailable leaves the complete bundle in the local work folder and raises after
    the ingest, so the run is marked failed and says where its logs are.
    """
    lines = [f"# Run `{run.run_id}`", "", f"Status: **{run.status}**" + (f" — {run.status_reason}" if run.status_reason else "")]
    if run.stop_reason:
        lines.append(f"\nStopped: {run.stop_reason}")
    lines += [f"- {problem}" for problem in run.problems]
    store_error = None
    bundle_uri = run.bundle.resolve().as_uri()
    try:
        result = open_store(run.campaign.store).put_bundle(run.bundle, run.run_id)
        bundle_uri = result.uri
        lines.append(f"\nBundle stored: {result.summary()}")
    except StoreError as exc:
        store_error = exc
        lines.append(f"\nBundle NOT stored ({exc}); every file is kept in {run.bundle}")
    if run.iterations:
        try:
            report = ingest_bundle(run.bundle, warehouse_path(warehouse), bundle_uri=bundle_uri)
            lines.append("\n" + _verdict_lines(report))
            lines.append("\n" + validation_markdown(report.run_id, warehouse_path(warehouse),
                                                     run.bundle.parents[1] / "reports" / run.run_id))
            lines.append("\n" + publish_run_report(run.run_id, warehouse_path(warehouse), run.campaign.store,
                                                    run.bundle.parents[1]))
        except (ManifestError, RuntimeError, ValueError) as exc:
            lines.append(f"\nIngest failed: {exc}. Re-run `perfcampaign ingest {run.bundle}` once fixed.")
    else:
        lines.append("\nNo iteration ran: nothing to ingest.")
    text = "\n".join(lines)
    print(text)
    if store_error is not None:
        raise store_error
    return text


def _verdict_lines(report: IngestReport) -> str:
    sides = ", ".join(f"{count:,} {side}" for side, count in report.requests_by_side.items())
    rows = [f"Ingested into `{report.warehouse}`: {sides} requests, {report.rejected_lines:,} rejected lines.", "",
            "| requirement | verdict | worst | holds up to iteration |", "| --- | --- | ---: | ---: |"]
    for requirement, side, metric, op, threshold, measured, passed, up_to, _ in report.verdicts:
        verdict = "not judged" if passed is None else ("holds" if passed else "**BROKEN**")
        worst = "" if measured is None else f"{measured:.4g}"
        rows.append(f"| {requirement} ({side} {metric} {op} {threshold:g}) | {verdict} | {worst} | {up_to or ''} |")
    return "\n".join(rows)
