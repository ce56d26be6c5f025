"""The report in a real browser: headless Chromium (Debian's package) renders it, every image loads, no console errors;
a 3 x 3 matrix's report at 1400 px has no box on another and no table that scrolls (measured in the DOM).

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: commands on fd 3,
answers and events on fd 4, NUL-separated JSON), so no port is opened and no driver is needed. The test
installs Debian's `chromium` when it is missing and skips, saying why, only when that is impossible.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tasks.report.build import build_report
from tests.unit.report.matrix_run import build_matrix_warehouse
from tests.unit.report.runs import build_warehouse

pytestmark = pytest.mark.integration
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def chromium() -> str:
    """The chromium binary, installed from Debian's packages if needed; skip when that cannot be done."""
    found = shutil.which("chromium")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("chromium is not installed and cannot be: needs root and apt-get (apt-get install -y chromium)")
    result = subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], capture_output=True, text=True, timeout=900)
    if result.returncode != 0 or not shutil.which("chromium"):
        pytest.skip(f"chromium could not be installed with apt-get: {result.stderr.strip()[-300:]}")
    return shutil.which("chromium")


class DevTools:
    """A minimal DevTools-protocol client over Chromium's debugging pipe."""

    def __init__(self, binary: str, profile: Path):
        to_browser_read, self._write = os.pipe()
        self._read, from_browser_write = os.pipe()

        def as_fds_3_and_4() -> None:  # in the child: the pipe ends Chromium expects, whatever numbers they had
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_read, from_browser_write)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self._process = subprocess.Popen(
            [binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}", "--window-size=1280,900",
             "about:blank"],
            pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=as_fds_3_and_4,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the debugging pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout_s: float = 60) -> dict:
        """Send a command and return its result; events that arrive meanwhile are kept in `events`."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout_s
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def wait_for(self, method: str, timeout_s: float = 60) -> dict:
        """The first event `method` (already received or coming)."""
        deadline = time.monotonic() + timeout_s
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._message(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout_s=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
        os.close(self._write)
        os.close(self._read)


LAYOUT = """(() => {
    document.querySelectorAll('details').forEach(d => { d.open = true; });  // their tables must fit too
    const scrolling = Array.from(document.querySelectorAll('.scroll'))
        .filter(d => d.scrollWidth > d.clientWidth)
        .map(d => `${d.closest('section').id}: ${d.scrollWidth} > ${d.clientWidth} px`);
    const blocks = Array.from(document.querySelectorAll(
        'header h1, header .meta, nav, main h2, main h3, main p, main li, main figure, main .scroll, main summary'));
    const boxes = blocks.map(e => [e, e.getBoundingClientRect()]).filter(([, r]) => r.width > 0 && r.height > 0);
    const overlaps = [];
    for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
            const [a, ra] = boxes[i], [b, rb] = boxes[j];
            if (a.contains(b) || b.contains(a)) continue;
            if (ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5 && ra.top < rb.bottom - 0.5 && rb.top < ra.bottom - 0.5) {
                overlaps.push(`${a.tagName} "${a.innerText.slice(0, 40)}" / ${b.tagName} "${b.innerText.slice(0, 40)}"`);
            }
        }
    }
    return {scrolling, overlaps, boxes: boxes.length, tables: document.querySelectorAll('.scroll').length,
            page: [document.documentElement.scrollWidth, document.documentElement.clientWidth]};
})()"""


def render(binary: str, report: Path, tmp_path: Path, width: int, expression: str) -> tuple[dict, DevTools]:
    """Open `report` at `width` px, evaluate `expression`, screenshot it to tmp_path/report.png."""
    browser = DevTools(binary, Path(tempfile.mkdtemp(prefix="chromium-profile-", dir=tmp_path)))
    try:
        (page,) = [t for t in browser.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        session = browser.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                            "mobile": False}, session=session)
        browser.send("Page.navigate", {"url": report.as_uri()}, session=session)
        browser.wait_for("Page.loadEventFired")
        state = browser.send("Runtime.evaluate", {"returnByValue": True, "expression": expression},
                             session=session)["result"]["value"]
        shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=session)
        (tmp_path / "report.png").write_bytes(base64.b64decode(shot["data"]))
        state["pdf"] = browser.send("Page.printToPDF", {"printBackground": False}, session=session)["data"]
    finally:
        browser.close()
    return state, browser


@pytest.fixture(scope="module")
def matrix_report(tmp_path_factory) -> Path:
    """A 3 x 3 matrix run's report (tests/unit/report/matrix_run.py): 9 iterations, 3 series, 2 sides."""
    root = tmp_path_factory.mktemp("browser-matrix")
    return build_report(build_matrix_warehouse(root), "matrix-1", root / "report").path("html")


def test_a_3x3_matrix_report_at_1400_px_has_nothing_overlapping_and_no_table_scrolling(matrix_report, tmp_path):
    """Measured in the DOM: the boxes of headings, paragraphs, list items, figures and tables do not intersect,
    and no table is wider than its place (scrollWidth <= clientWidth), every collapsed block opened."""
    state, _ = render(chromium(), matrix_report, tmp_path, 1400, LAYOUT)
    assert state["boxes"] > 40 and state["tables"] >= 8  # the page was measured, not an empty one
    assert state["scrolling"] == []
    assert state["overlaps"] == []
    assert state["page"][0] <= state["page"][1]  # nor does the page itself


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """broken-1's report: every chart kind, a baseline comparison, findings."""
    root = tmp_path_factory.mktemp("browser-report")
    warehouse = build_warehouse(root, ("pass-1", "broken-1"))
    return build_report(warehouse, "broken-1", root / "report").path("html")


def test_report_renders_with_every_image_and_no_console_error(report, tmp_path):
    state, browser = render(chromium(), report, tmp_path, 1280, """({
            title: document.title,
            images: Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]),
            sections: document.querySelectorAll('main section').length,
            text: document.body.innerText,
        })""")
    assert state["title"] == "broken-1: performance report"
    assert len(state["images"]) == 5
    assert all(complete and width > 300 and height > 100 for complete, width, height in state["images"])
    assert state["sections"] == 12  # summary ... iterations, background load, ..., history, ..., health findings
    assert "does not hold at iterations 3, 4" in state["text"]
    errors = [e for e in browser.events
              if e.get("method") == "Runtime.exceptionThrown"
              or e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert")
              or e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"]
    assert errors == []
    assert base64.b64decode(state["pdf"]).startswith(b"%PDF")
