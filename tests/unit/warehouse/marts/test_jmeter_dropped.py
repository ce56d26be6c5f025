"""A JMeter throughput timer never drops a call (a thread behind the pace sends late): its dropped calls are
the plan's shortfall, rate_per_s x the measured seconds - the calls sent. Checked on a real CSV JTL (Taurus'
taurus-slow-stdev.jtl, 599 samples in 7 s) against pandas, and on a real summariser log for the stop rule."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tasks.loadtools.config import Load
from tasks.loadtools.jmeter import JMeterTool
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.conftest import SAMPLES

RATE_PER_S = 120  # the plan's pace: more than the 85 calls/s the file holds
WARMUP_S = 1
START_S, END_S = 1532376558, 1532376566  # the whole seconds around the file's first and last sample


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("jmeter-dropped")
    jtl = SAMPLES / "jmeter" / "taurus-slow-stdev.jtl"
    at = lambda s: datetime.fromtimestamp(s, timezone.utc).isoformat()  # noqa: E731
    iterations = [{"index": 1, "start": at(START_S), "end": at(END_S), "warmup_s": WARMUP_S,
                   "load": {"rate_per_s": RATE_PER_S, "threads": 112}}]
    requirements = [{"id": "delivered", "metric": "error_rate_with_dropped", "op": "<", "threshold": 0.05,
                     "side": "client"}]
    source = {"kind": "jtl", "host": "lg1", "path": "lg1/results.jtl"}
    root = write_bundle(tmp_path / "b", {"lg1/results.jtl": jtl}, [source], iterations, requirements)
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda m: None)
    return tmp_path / "w.duckdb", jtl


def test_a_paced_plans_shortfall_is_its_dropped_calls_and_counts_as_failed(warehouse):
    db, jtl = warehouse
    raw = pd.read_csv(jtl)
    sent = raw[raw["timeStamp"] >= (START_S + WARMUP_S) * 1000]  # a sample's timeStamp is its start
    seconds = END_S - START_S - WARMUP_S
    dropped = round(RATE_PER_S * seconds) - len(sent)
    errors = int((~sent["success"]).sum())
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("select calls, errors, dropped, offered_per_s, achieved_per_s, error_rate_with_dropped "
                          "from iteration_summary where side = 'client'").fetchone()
        verdict = con.execute("select measured, passed from verdicts where iteration = 1").fetchone()
    assert dropped > 0
    assert row == (len(sent), errors, dropped, RATE_PER_S, pytest.approx(len(sent) / seconds),
                   pytest.approx((errors + dropped) / (len(sent) + dropped)))
    assert verdict == (pytest.approx((errors + dropped) / (len(sent) + dropped)), False)


def test_the_stop_rule_reads_the_shortfall_from_the_summariser(tmp_path):
    """stdout-summary.txt: `summary = 1044 in 00:00:31`; planned 40/s x 31 s = 1240, so 196 dropped. The seconds
    are the step's load window (JMeter's test start to its last sample's end: 31 s here, as its summariser
    says in whole seconds), not the process's."""
    log = SAMPLES.parent / "jmeter" / "stdout-summary.txt"
    spec = Load(tool="jmeter", script="p.jmx", generators=["j1"], duration_s=30, steps=[{"rate_per_s": 40}])
    (tmp_path / "j1").mkdir()
    (tmp_path / "j1" / "jmeter.log").write_bytes(log.read_bytes())
    result = JMeterTool(spec, {}, "/w", Path("/repo")).summarize(
        1, {"rate_per_s": 40}, 31.0, tmp_path, [{"kind": "jmeter_log", "path": "j1/jmeter.log"}])
    assert (result.calls, result.errors, result.dropped) == (1044, 2, 40 * 31 - 1044)
    assert result.figure("error_rate_with_dropped") == pytest.approx((2 + 196) / (1044 + 196))
    closed = JMeterTool(spec, {}, "/w", Path("/repo")).summarize(
        1, {"threads": 4}, 33.0, tmp_path, [{"kind": "jmeter_log", "path": "j1/jmeter.log"}])
    assert closed.dropped == 0  # no plan, no shortfall
