"""One hostile bundle through every command and writer (issue 18 faults 5, 6, 7).

ESC/BEL in a source path, the campaign, the scenario, a load key and the run's status_reason: nothing printed to
a terminal carries a raw control character (stdout and stderr of every command, the ingest's progress, the
`history of` line, history's plan line), and every file the report writes is well-formed in its format
(junit.xml read by an XML parser, report.html by html.parser, summary.json by json, summary.md as text).
A failure is one line and exit code 1; the traceback only with --debug.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.bundles import write_bundle
from tests.unit.test_hostile_input import REPO, WINDOW, _line

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # what may act on a terminal (tab and newline may not)
CLI = [sys.executable, "-c", "from tasks.cli.main import main; main()"]


def _cli(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=300, check=False)
    assert (done.returncode == 0) == ok, (args, done.stderr[-2000:])
    return done


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    path = f"app/access{HOSTILE}.log"
    source = {"kind": "access_log", "host": "app", "path": path, "preset": "tomcat_common_d", "duration_unit": "ms"}
    window = [{**WINDOW[0], "load": {f"vus{HOSTILE}": 5}}]
    root = write_bundle(tmp / "b", {path: "".join(_line(s) + "\n" for s in range(40))}, [source], window,
                        requirements=[{"id": "r1", "metric": "avg_ms", "op": "<", "threshold": 1, "side": "server"}],
                        status="failed", status_reason=f"hook {HOSTILE} failed")
    text = (root / "run.yaml").read_text().replace("campaign: test", 'campaign: "c\\e]0;PWNED\\a\\e[2J"')
    (root / "run.yaml").write_text(text.replace("scenario: unit", 'scenario: "s\\e]0;PWNED\\a\\e[2J"'))
    warehouse = str(tmp / "w.duckdb")
    ingested = _cli("ingest", str(root), "-w", warehouse)
    return tmp, warehouse, ingested


def _clean(done: subprocess.CompletedProcess) -> None:
    for stream in (done.stdout, done.stderr):
        assert not RAW_CONTROL.search(stream), (done.args[3:], stream[:2000])


def test_no_command_prints_a_raw_control_character(hostile_run):
    tmp, warehouse, ingested = hostile_run
    _clean(ingested)
    assert "reading app/access\\x1b]0;PWNED\\x07\\x1b[2J.log" in ingested.stderr  # the progress line, shown
    assert "history of c\\x1b]0;PWNED\\x07\\x1b[2J" in ingested.stderr
    campaign = "c" + HOSTILE
    for args in (["runs"], ["show", "test-run"], ["sql", "select * from runs"], ["sql", "select * from runs", "-f", "csv"],
                 ["sql", "select * from iterations", "-f", "json"], ["history", campaign], ["changes"]):
        _clean(_cli(*args, "-w", warehouse))
    excluded = _cli("exclude", "test-run", "--note", f"why {HOSTILE}", "-w", warehouse)
    _clean(excluded)
    assert "history of c\\x1b]0;PWNED" in excluded.stderr


def test_every_report_file_is_well_formed(hostile_run):
    tmp, warehouse, _ = hostile_run
    done = _cli("report", "test-run", "-o", str(tmp / "out"), "-w", warehouse)
    _clean(done)
    out = tmp / "out"
    junit = ET.fromstring((out / "junit.xml").read_bytes())  # an ESC here was `not well-formed (invalid token)`
    messages = [failure.get("message") for failure in junit.iter("failure")]
    assert any("hook \\x1b]0;PWNED\\x07\\x1b[2J failed" in message for message in messages)

    class Texts(HTMLParser):
        seen: list[str] = []

        def handle_data(self, data):
            self.seen.append(data)

    page = Texts()
    page.feed((out / "report.html").read_text())
    assert page.seen and not any(RAW_CONTROL.search(text) for text in page.seen)
    assert "\\x1b]0;PWNED" in "".join(page.seen)
    summary = (out / "summary.json").read_text()
    assert not RAW_CONTROL.search(summary) and json.loads(summary)
    assert not RAW_CONTROL.search((out / "summary.md").read_text())


def test_a_failure_is_one_line_and_the_traceback_only_with_debug(tmp_path):
    lake = "ducklake:postgres:dbname=x password=x data_path=s3://b/l/"
    done = _cli("runs", "-w", lake, ok=False)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "password= does not belong" in done.stderr
    debug = _cli("--debug", "runs", "-w", lake, ok=False)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "LakeSettingError" in debug.stderr
