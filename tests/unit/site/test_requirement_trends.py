"""The campaign page's requirement trends against the `verdicts` mart read with pandas: three more nightly runs
that state requirements (one broken in the middle run, one whose scope changed after the first) ingested into a
copy of the two campaigns' warehouse (tests/site_history.py)."""

from __future__ import annotations

import pytest

from tasks.site.build import build_site
from tasks.site.svg import OFF_SCALE, RED
from tests.history_nights import write_night
from tests.site_history import NIGHTLY_NIGHTS, copy_with, frame, stating
from tests.unit.history.nightly import night
from tests.unit.site.tables import read_page

BROKEN_NIGHT = NIGHTLY_NIGHTS + 1  # its p95 threshold of 1 ms is broken


def _requirements(n: int) -> list[dict]:
    host = "app2" if n == NIGHTLY_NIGHTS else "app1"  # the first night judges another scope: not the same requirement
    return [
        {"id": "server-p95", "metric": "p95_ms", "op": "<", "threshold": 1 if n == BROKEN_NIGHT else 10000,
         "side": "server"},
        {"id": "app1-at-2", "metric": "avg_ms", "op": "<", "threshold": 15, "side": "server", "host": host,
         "at": {"iteration": 2}},
        {"id": "client-errors", "metric": "error_rate", "op": "<=", "threshold": 0.03, "side": "client"},
    ]


@pytest.fixture(scope="module")
def judged(site_history, tmp_path_factory):
    """The copy with three more nights stating requirements, and its site."""
    root = tmp_path_factory.mktemp("requirement-trends")
    warehouse = copy_with(site_history, root, (stating(write_night(root / "more", n, night(n)), _requirements(n))
                                               for n in range(NIGHTLY_NIGHTS, NIGHTLY_NIGHTS + 3)))
    return warehouse, build_site(warehouse, root / "site")


def _chart(site, campaign: str, requirement: str) -> dict:
    reader = read_page((site.out / f"campaigns/{campaign}/index.html").read_text())
    (chart,) = [s for s in reader.svgs if s["text"] and s["text"][0].startswith(f"{requirement}: ")]
    return chart


def test_each_requirement_of_the_last_run_is_drawn_from_its_verdicts(judged):
    warehouse, site = judged
    verdicts = frame(warehouse, "select v.*, r.started_at, r.campaign from verdicts v join runs r using (run_id) "
                                "where v.iteration is null")
    verdicts["scope"] = verdicts["scope"].fillna("(whole side)")
    last = verdicts[verdicts["run_id"] == f"nightly-{NIGHTLY_NIGHTS + 2:03d}"]
    assert sorted(last["requirement_id"]) == ["app1-at-2", "client-errors", "server-p95"]
    for requirement in last.to_dict("records"):
        same = verdicts[(verdicts["requirement_id"] == requirement["requirement_id"])
                        & (verdicts["side"] == requirement["side"]) & (verdicts["metric"] == requirement["metric"])
                        & (verdicts["scope"] == requirement["scope"]) & verdicts["is_judged"]]
        expected = same.sort_values("started_at")
        chart = _chart(site, "nightly", requirement["requirement_id"])
        shown = [p["tip"].split(": ") for p in chart["points"]]
        assert [run for run, _ in shown] == list(expected["run_id"])
        for (_, figure), value, passed, point in zip(shown, expected["measured"], expected["passed"], chart["points"]):
            number, state = figure.rsplit(" ", 1)
            if requirement["metric"] == "error_rate":  # a fraction, shown in %
                assert number == f"{value * 100:.2f} %"
            else:
                assert float(number.replace(",", "")) == pytest.approx(value, rel=1e-3, abs=1e-3)
            assert state == ("held" if passed else "BROKEN")
            assert (point["fill"] == RED) == (not passed)
        limit = (f"{requirement['threshold'] * 100:.2f} %" if requirement["metric"] == "error_rate"
                 else f"{requirement['threshold']:,g}")
        threshold = f"threshold {requirement['op']} {limit}"
        if requirement["threshold"] <= OFF_SCALE * expected["measured"].max():  # the last run's threshold, drawn
            assert chart["level"] == 1 and threshold in chart["text"]
        else:  # or named: drawn, it would flatten the values against the axis
            assert chart["level"] == 0 and f"{threshold} (off the scale, above)" in chart["text"]
    assert len(_chart(site, "nightly", "app1-at-2")["points"]) == 2  # the first night judged host app2
    assert [_chart(site, "nightly", r)["level"] for r in ("app1-at-2", "client-errors", "server-p95")] == [1, 1, 0]
    broken = _chart(site, "nightly", "server-p95")["points"]
    assert [p["tip"].split(": ")[0] for p in broken if p["fill"] == RED] == [f"nightly-{BROKEN_NIGHT:03d}"]


def test_a_campaign_whose_last_run_states_no_requirement_says_so(judged):
    _, site = judged
    assert "The last run states no requirement." in (site.out / "campaigns/checkout/index.html").read_text()
