"""Build a run's report files from the warehouse, publish them next to the bundle, link them from the run.

Files: `report.html` (self-contained, printable), `summary.md` (the Prefect artifact), `summary.json` (for
machines) and `junit.xml` (the verdicts, for CI). Published as `report/<file>` beside the stored bundle;
the table `reports(run_id, uri, created_at)` remembers where.
"""

from __future__ import annotations

import shutil
import sys
import traceback
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tasks.report import history, jmeter, sections, sections_more, soak
from tasks.report.charts import Chart, load_chart, minute_chart
from tasks.report.data import ReportData, load_report_data
from tasks.report.fmt import is_missing
from tasks.report.host_charts import host_charts
from tasks.report.html import esc, page
from tasks.report.junit import junit_xml
from tasks.report.summary import summary_json, summary_markdown
from tasks.settings import VALIDATION_PAGE, artifact_key
from tasks.store.base import StoreError
from tasks.store.factory import open_store
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.engines import Lake, parse_warehouse
from tasks.warehouse.models import model_sql, warehouse_has

FILES = {"html": "report.html", "markdown": "summary.md", "json": "summary.json", "junit": "junit.xml"}


@dataclass
class ReportFiles:
    """The files of one built report, and the figures they were made from."""

    run_id: str
    folder: Path
    data: ReportData

    def path(self, name: str) -> Path:
        return self.folder / FILES[name]


def all_charts(data: ReportData) -> dict[str, Chart]:
    """Every chart that has data, by key: the requests' (charts.py) and the hosts' (host_charts.py)."""
    charts = [minute_chart(data), load_chart(data), *host_charts(data)]
    return {chart.key: chart for chart in charts if chart is not None}


def render_html(data: ReportData, generated_at: datetime) -> str:
    """The whole report page."""
    charts = all_charts(data)
    parts = [
        ("summary", "Summary", sections.summary(data)),
        ("requirements", "Requirements", sections.requirements(data)),
        ("capacity", "Capacity: throughput and response time against load", sections.capacity(data, charts)),
        ("timeline", "Time line", sections.timeline(charts)),
        *([("soak", "Soak: drift over its windows", soak.section(data))] if soak.is_soak(data) else []),
        ("iterations", "Iterations", sections.iterations(data)),
        ("background", "Background load", sections.background(data)),
        *([("jmeter", "JMeter's own summary", jmeter.section(data))] if jmeter.has_summary(data) else []),
        ("client-server", "Client against server", sections.client_server(data)),
        ("baseline", "Against the baseline" + (f" {data.baseline}" if data.baseline else ""),
         sections_more.baseline(data)),
        ("history", "History", history.history(data, history.history_chart(data))),
        ("hosts", "Hosts, JVMs and containers", sections_more.hosts(data, charts)),
        ("expectations", "Data expectations", sections_more.expectations(data)),
        ("findings", "Health findings", sections_more.findings(data)),
    ]
    files = " · ".join(f'<a href="{name}">{name}</a>' for name in (FILES["markdown"], FILES["json"], FILES["junit"]))
    footer = (f"Made by perfcampaign on {generated_at:%Y-%m-%d %H:%M:%S} UTC from the warehouse; rebuild with "
              f"<code>perfcampaign report {esc(data.run['run_id'])}</code>. Beside this file: {files}.")
    return page(f"{data.run['run_id']}: performance report", sections.header(data), parts, footer)


def write_report(data: ReportData, folder: Path) -> ReportFiles:
    """Write the four report files of `data` into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    _keep_validation_page(data, folder)
    generated_at = datetime.now(timezone.utc)
    files = ReportFiles(data.run["run_id"], folder, data)
    files.path("html").write_text(render_html(data, generated_at), encoding="utf-8")
    files.path("markdown").write_text(summary_markdown(data), encoding="utf-8")
    files.path("json").write_text(summary_json(data, {k: v for k, v in FILES.items()}), encoding="utf-8")
    files.path("junit").write_text(junit_xml(data), encoding="utf-8")
    return files


def _keep_validation_page(data: ReportData, folder: Path) -> None:
    """Copy a local validation page beside the report and link it relatively, so the pair can be published."""
    page = data.validation_page
    if not page or "://" in page or not Path(page).is_file():
        return
    target = folder / VALIDATION_PAGE
    if Path(page).resolve() != target.resolve():
        shutil.copyfile(page, target)
    data.validation_page = VALIDATION_PAGE


def build_report(warehouse: Path | Lake, run_id: str, folder: Path, baseline: str | None = None, compare: bool = True,
                 validation_page: str | None = None) -> ReportFiles:
    """Read the run from the warehouse (read-only) and write its report files into `folder`."""
    with open_warehouse(warehouse) as con:
        data = load_report_data(con, run_id, baseline, compare, validation_page)
    return write_report(data, Path(folder))


def record_report(warehouse: Path | Lake, run_id: str, uri: str) -> None:
    """Link a published report from its run: one row per (run_id, uri) in `reports`, the newest time kept."""
    with open_warehouse(warehouse, write=True) as con:
        con.execute(model_sql("reports/create_reports"))
        params = {"run_id": run_id, "uri": uri}
        con.execute("delete from reports where run_id = $run_id and uri = $uri", params)
        con.execute("insert into reports values ($run_id, $uri, now())", params)


def latest_report(warehouse: Path | Lake, run_id: str) -> str | None:
    """The URI of the run's latest published report, None when there is none."""
    with open_warehouse(warehouse) as con:
        known = warehouse_has(con, "reports")
        row = con.execute(model_sql("reports/latest_report"), {"run_id": run_id}).fetchone() if known else None
    return row[0] if row else None


def as_local_path(uri: str) -> str:
    """A file:// URI as a path (what a terminal user can open); other URIs as they are."""
    return unquote(urlsplit(uri).path) if uri.startswith("file:") else uri


def publish(files: ReportFiles, store) -> str:
    """Put the report files next to the stored bundle; returns the URI of report.html."""
    uris = {name: store.put_file(files.run_id, f"report/{FILES[name]}", files.path(name)) for name in FILES}
    if files.data.validation_page == VALIDATION_PAGE:
        store.put_file(files.run_id, f"report/{VALIDATION_PAGE}", files.folder / VALIDATION_PAGE)
    return uris["html"]


def create_artifacts(files: ReportFiles, uri: str) -> bool:
    """The summary (Markdown), the verdict table and a link to the report as artifacts of the current flow run.

    Outside a flow run nothing is created (an artifact would start a Prefect server for nothing); returns
    whether artifacts were made.
    """
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is None:
        return False
    from prefect.artifacts import (
        create_link_artifact,
        create_markdown_artifact,
        create_table_artifact,
    )

    data = files.data
    key = artifact_key("report", data.run["campaign"])
    create_markdown_artifact(key=key, markdown=summary_markdown(data, uri), description=f"report of {files.run_id}")
    verdicts = data["verdicts"]
    rows = [{k: (None if is_missing(v) else v) for k, v in r.items() if k not in ("run_id", "iteration", "calls_per_s")}
            for r in verdicts[verdicts["iteration"].isna()].to_dict("records")]
    if rows:
        create_table_artifact(key=artifact_key("verdicts", data.run["campaign"]), table=rows,
                              description=f"requirements of {files.run_id}")
    create_link_artifact(key=artifact_key("report-link", data.run["campaign"]), link=uri,
                         link_text=f"report of {files.run_id}")
    return True


def publish_run_report(run_id: str, warehouse: Path | Lake, store_config, work_dir: Path) -> str:
    """After a campaign's ingest: build, publish, link and announce the report; returns a Markdown line.

    With `store_config` None (an ingest of a bundle that is not in a store) the report stays in
    `work_dir/reports/RUN_ID/` and that is what the run links to.

    The run's data is already safe in the warehouse and the store, and `perfcampaign report RUN_ID` rebuilds
    the report at any time, so a report that cannot be made is said loudly here rather than failing a run
    whose measurements are good.
    """
    try:
        files = build_report(parse_warehouse(warehouse), run_id, Path(work_dir) / "reports" / run_id)
        uri, where = files.path("html").resolve().as_uri(), ""
        try:
            if store_config is not None:
                uri = publish(files, open_store(store_config))
        except StoreError as exc:
            where = f" (kept locally only: {exc})"
        record_report(parse_warehouse(warehouse), run_id, uri)
        create_artifacts(files, uri)
        return f"Report: {uri}{where}"
    except Exception as exc:  # noqa: BLE001 - see the docstring
        traceback.print_exc(file=sys.stderr)
        return f"Report NOT built ({type(exc).__name__}: {exc}); rebuild it with `perfcampaign report {run_id}`."
