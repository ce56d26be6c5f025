"""Offered against achieved load per step, in `perfcampaign show` and in the report (docs/scenarios.md promises
both): a real JTL (Taurus' taurus-slow-stdev.jtl, 599 samples in 7 s) under a plan of 120 calls/s it could
not keep, so the plan's shortfall is its dropped calls. Expected figures from pandas over the raw file."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from tasks.report.build import build_report
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.conftest import SAMPLES

RATE_PER_S, WARMUP_S = 120, 1
START_S, END_S = 1532376558, 1532376566  # the whole seconds around the file's first and last sample
JTL = SAMPLES / "jmeter" / "taurus-slow-stdev.jtl"
CLI = str(Path(sys.executable).parent / "perfcampaign")


@pytest.fixture(scope="module")
def paced(tmp_path_factory) -> tuple[Path, dict]:
    """The run in a warehouse, and its client figures computed from the raw file."""
    tmp_path = tmp_path_factory.mktemp("offered")
    at = lambda s: datetime.fromtimestamp(s, timezone.utc).isoformat()  # noqa: E731
    iterations = [{"index": 1, "start": at(START_S), "end": at(END_S), "warmup_s": WARMUP_S,
                   "load": {"rate_per_s": RATE_PER_S, "threads": 112}}]
    source = {"kind": "jtl", "host": "lg1", "path": "lg1/results.jtl"}
    root = write_bundle(tmp_path / "b", {"lg1/results.jtl": JTL}, [source], iterations, run_id="paced")
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda m: None)
    raw = pd.read_csv(JTL)
    sent = raw[raw["timeStamp"] >= (START_S + WARMUP_S) * 1000]
    seconds = END_S - START_S - WARMUP_S
    dropped = round(RATE_PER_S * seconds) - len(sent)
    errors = int((~sent["success"]).sum())
    return tmp_path / "w.duckdb", {
        "offered_per_s": RATE_PER_S, "achieved_per_s": len(sent) / seconds, "dropped": dropped,
        "achieved_share": len(sent) / (len(sent) + dropped), "error_rate": errors / len(sent),
        "error_rate_with_dropped": (errors + dropped) / (len(sent) + dropped)}


def test_show_prints_offered_achieved_and_dropped_per_step(paced):
    warehouse, expected = paced
    shown = subprocess.run([CLI, "show", "paced", "-w", str(warehouse), "-f", "json"], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    blocks = [json.loads(block) for block in shown.stdout.strip().split("\n\n") if block.startswith("[")]
    (row,) = next(block for block in blocks if block and "offered_per_s" in block[0])
    assert expected["dropped"] > 0
    assert row == {"iteration": 1, "load": "rate_per_s=120 threads=112", "side": "client",
                   **{name: pytest.approx(value) for name, value in expected.items()}}
    table = subprocess.run([CLI, "show", "paced", "-w", str(warehouse)], capture_output=True, text=True, timeout=120)
    lines = table.stdout.split("paced: offered against achieved load per step\n")[1].splitlines()
    assert lines[0].split() == ["iteration", "load", "side", "offered", "calls/s", "achieved", "calls/s",
                                "achieved", "(%)", "dropped", "error_rate", "(%)", "error_rate_with_dropped", "(%)"]
    values = [float(text.replace(",", "")) for text in lines[1].split()[4:]]  # in the units of the headings
    assert values == [RATE_PER_S, round(expected["achieved_per_s"], 1), round(100 * expected["achieved_share"], 2),
                      expected["dropped"], round(100 * expected["error_rate"], 2),
                      round(100 * expected["error_rate_with_dropped"], 2)]


def test_the_report_has_the_offered_table_in_its_units(paced, tmp_path):
    warehouse, expected = paced
    page = build_report(warehouse, "paced", tmp_path).path("html").read_text()
    section = page.split("<h3>Offered against achieved load</h3>")[1].split("</table>")[0]
    headings = [re.sub(r"<wbr>", "", h) for h in re.findall(r"<th(?: [^>]*)?>(.*?)</th>", section)]
    assert headings == ["iteration", "load", "side", "offered calls/s", "achieved calls/s", "achieved (%)", "dropped",
                        "error_rate (%)", "error_rate_with_dropped (%)"]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", section)
    assert cells == ["1", "rate_per_s=120 threads=112", "client", f"{RATE_PER_S:.1f}",
                     f"{expected['achieved_per_s']:.1f}", f"{100 * expected['achieved_share']:.2f}",
                     f"{expected['dropped']:,}", f"{100 * expected['error_rate']:.2f}",
                     f"{100 * expected['error_rate_with_dropped']:.2f}"]
