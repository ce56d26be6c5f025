"""Data expectations on a bundle recorded by real k6 against the real JVM echo services."""

from __future__ import annotations

import duckdb
import pytest

from tasks.validate.run import validate_run
from tasks.warehouse.ingest import ingest_bundle

pytestmark = pytest.mark.integration


def test_a_recorded_demo_run_passes_and_its_clocks_agree(echo_bundle, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(echo_bundle, warehouse, progress=lambda m: None)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        run_id = con.execute("select run_id from runs").fetchone()[0]
    summary = validate_run(warehouse, run_id, tmp_path / "out")
    assert summary.success, summary.markdown()
    assert summary.failed == [] and summary.warnings == [], summary.markdown()
    with duckdb.connect(str(warehouse), read_only=True) as con:
        skews = con.execute("select host, reference_host, skew_s, is_corrected, mismatch_share from clock_skew "
                            "order by host").fetchall()
    # One machine, one clock: k6's send time and the service's %t agree to well under a second.
    assert [(host, reference, corrected) for host, reference, _, corrected, _ in skews] == [
        ("app1", "loadgen", False), ("app2", "loadgen", False)]
    assert all(abs(skew) < 0.1 and mismatch < 0.1 for _, _, skew, _, mismatch in skews), skews
    assert (tmp_path / "out" / "validation.html").read_text().count("FAIL") == 0
