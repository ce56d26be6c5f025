"""The site in a real browser: headless Chromium loads every page of a site built from a generated history of two
campaigns (tests/site_history.py) over file://, with no console error; every link resolves; the home page at
1400 px shows each campaign's row whole, without overlap (measured in the DOM, and the screenshot's size); the
campaign with a new regression shows it on the home page. Chromium as in test_report_browser.py (a pipe, no port).
"""

from __future__ import annotations

import base64
import struct
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from tasks.site.build import build_site
from tests.integration.test_report_browser import DevTools, chromium
from tests.site_history import open_regressions, site_history  # noqa: F401 - the session fixture

pytestmark = pytest.mark.integration
WIDTH = 1400
STATE = """({
    links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
    svgs: Array.from(document.querySelectorAll('svg')).map(s => [s.getBoundingClientRect().width,
                                                                s.getBoundingClientRect().height]),
    scrollWidth: document.documentElement.scrollWidth,
    rows: Array.from(document.querySelectorAll('table.campaigns tbody tr')).map(tr => ({
        box: [tr.getBoundingClientRect().top, tr.getBoundingClientRect().bottom],
        cells: Array.from(tr.cells).map(td => {const r = td.getBoundingClientRect();
                                                return [r.left, r.right, r.top, r.bottom, td.innerText,
                                                        td.querySelector('.bad') !== null]})})),
})"""


def _errors(events: list[dict]) -> list[dict]:
    return [e for e in events
            if e.get("method") == "Runtime.exceptionThrown"
            or e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert")
            or e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"]


@pytest.fixture(scope="module")
def browsed(site_history, tmp_path_factory):  # noqa: F811 - the imported fixture
    """Every page loaded at 1400 px: {page: its DOM state and errors}, and the home page's screenshot."""
    root = tmp_path_factory.mktemp("browser-site")
    site = build_site(site_history, root / "site")
    browser = DevTools(chromium(), Path(tempfile.mkdtemp(prefix="chromium-profile-", dir=root)))
    states, shot = {}, b""
    try:
        (target,) = [t for t in browser.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        session = browser.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=session)
        for path in site.pages:
            browser.events.clear()
            browser.send("Page.navigate", {"url": (site.out / path).as_uri()}, session=session)
            browser.wait_for("Page.loadEventFired")
            state = browser.send("Runtime.evaluate", {"returnByValue": True, "expression": STATE},
                                 session=session)["result"]["value"]
            states[path] = {**state, "errors": _errors(browser.events)}
            if path == "index.html":
                shot = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"},
                                                     session=session)["data"])
    finally:
        browser.close()
    return site, states, shot


def test_every_page_loads_without_error_and_every_link_resolves(browsed):
    site, states, _ = browsed
    assert len(states) == len(site.pages) > 3
    for path, state in states.items():
        assert state["errors"] == [], path
        assert state["links"], path  # every page links somewhere (home, campaigns, events, runs)
        for link in state["links"]:
            parsed = urlparse(link)
            assert parsed.scheme == "file", f"{path}: {link}"
            assert Path(unquote(parsed.path)).is_file(), f"{path}: {link}"
        assert all(width > 0 and height > 0 for width, height in state["svgs"]), path


def test_home_at_1400_px_shows_each_campaign_row_whole(browsed):
    _, states, shot = browsed
    home = states["index.html"]
    assert home["scrollWidth"] <= WIDTH
    assert [row["cells"][0][4] for row in home["rows"]] == ["checkout", "nightly"]
    for upper, lower in zip(home["rows"], home["rows"][1:]):
        assert upper["box"][1] <= lower["box"][0]
    for row in home["rows"]:
        cells = row["cells"]
        assert all(left < right <= WIDTH for left, right, *_ in cells)
        assert all(a[1] <= b[0] + 0.5 for a, b in zip(cells, cells[1:]))  # side by side, none over the next
        assert all(row["box"][0] - 0.5 <= top and bottom <= row["box"][1] + 0.5 for _, _, top, bottom, *_ in cells)
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", shot[16:24]) == (WIDTH, 900)


def test_the_new_regression_shows_on_the_home_page(browsed, site_history):  # noqa: F811 - the imported fixture
    _, states, _ = browsed
    cells = {row["cells"][0][4]: row["cells"] for row in states["index.html"]["rows"]}
    regressions = {campaign: (c[7][4], c[7][5]) for campaign, c in cells.items()}
    text, red = regressions["nightly"]
    assert red and int(text.split()[0]) >= 1 and "%" in text
    for campaign, (text, red) in regressions.items():
        count, _ = open_regressions(site_history, campaign)
        assert (int(text.split()[0]), red) == (count, count > 0)
