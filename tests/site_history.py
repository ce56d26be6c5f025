"""A history of two campaigns for the site's tests (tasks/site): the nightly history of tests/history_nights.py
("nightly": its known shifts, a failed run, an outlier, a plan change) and a quiet second campaign ("checkout":
the same bundle, steady levels), ingested and analysed. Cheap: no load runs, about a second a night.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tasks.history.analysis import analyse_run
from tasks.warehouse.ingest import ingest_bundle
from tests.history_nights import Night, write_night
from tests.unit.history.nightly import night

NIGHTLY_NIGHTS = 20  # nights 0..19: the +20 % latency shift at 10, the outlier at 14, capacity -20 % at 18
CHECKOUT_NIGHTS = 8


def _as_checkout(bundle: Path, number: int) -> Path:
    """The night's bundle as a run of the second campaign."""
    manifest = yaml.safe_load((bundle / "run.yaml").read_text())
    manifest.update(run_id=f"checkout-{number:03d}", campaign="checkout")
    (bundle / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return bundle


def build_history(work: Path, nightly: int = NIGHTLY_NIGHTS, checkout: int = CHECKOUT_NIGHTS) -> Path:
    """Both campaigns ingested into `work/w.duckdb` and analysed after their last run; the path."""
    path = work / "w.duckdb"
    quiet = lambda message: None  # noqa: E731 - the ingest's progress is not wanted here
    for n in range(nightly):
        ingest_bundle(write_night(work / "nightly", n, night(n)), path, progress=quiet)
    for n in range(checkout):
        bundle = _as_checkout(write_night(work / "checkout", n, Night(), seed=7), n)
        ingest_bundle(bundle, path, progress=quiet)
    analyse_run(path, f"nightly-{nightly - 1:03d}")
    analyse_run(path, f"checkout-{checkout - 1:03d}")
    return path
