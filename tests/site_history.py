"""A history of two campaigns for the site's tests (tasks/site): the nightly history of tests/history_nights.py
("nightly": latency +20 % at night 10, a one-night outlier at 14, every night stating NIGHTLY_REQUIREMENTS) and a quiet second campaign ("checkout": the
same bundle at steady levels, a failed run, and a version label full of HTML), ingested and analysed.
Cheap: no load runs, a second or two a night.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tasks.history.analysis import analyse_run
from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.history_nights import Night, write_night
from tests.unit.history.nightly import night

NIGHTLY_NIGHTS = 16
CHECKOUT_NIGHTS = 6
CHECKOUT_FAILED = 3
TRIAGED = {"acknowledged", "expected", "invalid"}
HOSTILE_VERSION = "2.0 <b>bold</b> & \"quoted\" 'x'"  # must reach every page escaped
ECHO_2 = "http://127.0.0.1:18082/echo"  # one of the client's two labels
NIGHTLY_REQUIREMENTS = [  # each scope the history has series of, and some it has not (the site says so)
    {"id": "p95-server", "metric": "p95_ms", "op": "<", "threshold": 10, "side": "server"},  # broken by the outlier
    {"id": "avg-app1-at-2", "metric": "avg_ms", "op": "<", "threshold": 9, "side": "server", "host": "app1",
     "at": {"iteration": 2}},
    {"id": "p50-echo-2", "metric": "p50_ms", "op": "<", "threshold": 100, "side": "client", "label": ECHO_2},
    {"id": "client-errors", "metric": "error_rate", "op": "<=", "threshold": 0.03, "side": "client"},
    {"id": "errors-with-dropped", "metric": "error_rate_with_dropped", "op": "<=", "threshold": 0.03,
     "side": "client"},  # a metric the history does not analyse
    {"id": "p95-echo-glob", "metric": "p95_ms", "op": "<", "threshold": 150, "side": "client",
     "label": "*18081*"},  # a label glob: no series of its own
]


def _as_checkout(bundle: Path, number: int) -> Path:
    """The night's bundle as a run of the second campaign."""
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    manifest.update(run_id=f"checkout-{number:03d}", campaign="checkout", labels={"sut_version": HOSTILE_VERSION})
    (bundle / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return bundle


def stating(bundle: Path, requirements: list[dict] = NIGHTLY_REQUIREMENTS) -> Path:
    """The night's bundle stating `requirements`."""
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    (bundle / "run.yaml").write_text(yaml.safe_dump({**manifest, "requirements": requirements}, sort_keys=False))
    return bundle


def build_history(work: Path) -> Path:
    """Both campaigns ingested into `work/w.duckdb` and analysed after their last run; the path."""
    path = work / "w.duckdb"
    quiet = lambda message: None  # noqa: E731 - the ingest's progress is not wanted here
    for n in range(NIGHTLY_NIGHTS):
        ingest_bundle(stating(write_night(work / "nightly", n, night(n))), path, progress=quiet)
    for n in range(CHECKOUT_NIGHTS):
        levels = Night(status="failed" if n == CHECKOUT_FAILED else "completed")
        ingest_bundle(_as_checkout(write_night(work / "checkout", n, levels, seed=7), n), path, progress=quiet)
    analyse_run(path, f"nightly-{NIGHTLY_NIGHTS - 1:03d}")
    analyse_run(path, f"checkout-{CHECKOUT_NIGHTS - 1:03d}")
    return path


@pytest.fixture(scope="session")
def site_history(tmp_path_factory) -> Path:
    """The two campaigns' warehouse, built once per session (a test that changes it works on a copy)."""
    return build_history(tmp_path_factory.mktemp("site-history"))


def copy_with(site_history: Path, root: Path, bundles: Iterable[Path]) -> Path:
    """A copy of the two campaigns' warehouse in `root` with `bundles` ingested: a test's own later nights."""
    warehouse = root / "w.duckdb"
    shutil.copyfile(site_history, warehouse)
    for bundle in bundles:
        ingest_bundle(bundle, warehouse, progress=lambda message: None)
    return warehouse


def frame(path: Path, sql: str) -> pd.DataFrame:
    with open_warehouse(path) as con:
        return con.execute(sql).df()


def open_regressions(path: Path, campaign: str) -> tuple[int, float | None]:
    """Events (change points grouped by event_id) that are level shifts for the worse and not wholly triaged;
    the largest of their median changes."""
    points = frame(path, "select * from change_points")
    points = points[points["campaign"] == campaign]
    events = points.groupby("event_id").agg(kind=("kind", "first"), direction=("direction", "first"),
                                            statuses=("status", lambda s: frozenset(s)),
                                            change_pct=("change_pct", "median"))
    closed = events["statuses"].map(lambda s: len(s) == 1 and next(iter(s)) in TRIAGED)
    found = events[(events["kind"] == "change") & (events["direction"] == "regression") & ~closed]
    if found.empty:
        return 0, None
    return len(found), float(found.loc[found["change_pct"].abs().idxmax(), "change_pct"])
