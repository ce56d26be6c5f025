"""An ingest loads only what it uses (issue 22: a small ingest's fixed cost): no Prefect, no Great Expectations,
no report or analysis libraries. Run in a fresh process, as `perfcampaign ingest` runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BUNDLE = Path(__file__).parents[2] / "data" / "samples" / "bundle-echo"
NOT_NEEDED = ("prefect", "great_expectations", "scipy", "matplotlib", "rich", "boto3")
INGEST = ("import json, sys; from tasks.warehouse.ingest import ingest_bundle; "
          "ingest_bundle(sys.argv[1], sys.argv[2], progress=lambda m: None); "
          f"print(json.dumps([m for m in {NOT_NEEDED!r} if m in sys.modules]))")


def test_an_ingest_imports_no_orchestration_validation_or_report_library(tmp_path):
    done = subprocess.run([sys.executable, "-c", INGEST, str(BUNDLE), str(tmp_path / "w.duckdb")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []


# `perfcampaign ingest` as typed: the ingest, then the campaign's history analysed (tasks/cli/history.py)
COMMAND = ("import atexit, json, sys; "
           f"atexit.register(lambda: print(json.dumps([m for m in {NOT_NEEDED!r} if m in sys.modules]))); "
           "from tasks.cli.main import main; "
           "sys.argv = ['perfcampaign', 'ingest', sys.argv[1], '--warehouse', sys.argv[2]]; main()")


def test_the_command_on_a_campaigns_first_run_imports_none_of_them_either(tmp_path):
    """With one run every series is under `min_runs`: the analysis tests nothing, so scipy (0.2 s) stays unloaded
    (significance._special); the history line still says what it read."""
    done = subprocess.run([sys.executable, "-c", COMMAND, str(BUNDLE), str(tmp_path / "w.duckdb")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert "0 change points" in done.stderr and "under 5 runs" in done.stderr
