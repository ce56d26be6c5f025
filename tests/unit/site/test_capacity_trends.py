"""The campaign page's capacity trends against the `capacity` mart read with pandas: a nightly run whose third
step offers 10 x the load for the same throughput (a knee at iteration 2) and one more ordinary night ingested
into a copy of the two campaigns' warehouse (tests/site_history.py)."""

from __future__ import annotations

import dataclasses

import pytest

from tasks.site.build import build_site
from tasks.site.data import TREND_RUNS
from tasks.site.svg import GREY
from tests.history_nights import write_night
from tests.site_history import CHECKOUT_FAILED, NIGHTLY_NIGHTS, copy_with, frame
from tests.unit.history.nightly import night
from tests.unit.site.tables import read_page

KNEE_NIGHT = NIGHTLY_NIGHTS


@pytest.fixture(scope="module")
def saturated(site_history, tmp_path_factory):
    """The copy with the knee's night and one more, and its site."""
    root = tmp_path_factory.mktemp("capacity-trends")
    levels = {KNEE_NIGHT: dataclasses.replace(night(KNEE_NIGHT), vus_3=180), KNEE_NIGHT + 1: night(KNEE_NIGHT + 1)}
    warehouse = copy_with(site_history, root, (write_night(root / "more", n, night_levels)
                                               for n, night_levels in levels.items()))
    return warehouse, build_site(warehouse, root / "site")


def _charts(site, campaign: str) -> dict[str, dict]:
    reader = read_page((site.out / f"campaigns/{campaign}/index.html").read_text())
    return {s["text"][0]: s for s in reader.svgs if s["text"] and s["text"][0].startswith("capacity: ")}


def _shown(chart: dict) -> list[tuple[str, float]]:
    out = []
    for point in chart["points"]:
        run, figure = point["tip"].split(": ", 1)
        out.append((run, float(figure.split(" ", 1)[0].replace(",", ""))))
    return out


def test_capacity_charts_draw_the_mart_of_the_last_runs(saturated):
    warehouse, site = saturated
    capacity = frame(warehouse, "select c.*, r.campaign, r.started_at from capacity c join runs r using (run_id)")
    for campaign in ("nightly", "checkout"):
        mine = capacity[capacity["campaign"] == campaign]
        recent = mine.drop_duplicates("run_id").nlargest(TREND_RUNS, "started_at")["run_id"]
        mine = mine[mine["run_id"].isin(recent)].sort_values(["side", "series", "started_at"])
        charts = _charts(site, campaign)
        highest = _shown(charts["capacity: highest throughput (calls/s)"])
        assert [run for run, _ in highest] == list(mine["run_id"])
        assert [value for _, value in highest] == pytest.approx(list(mine["max_calls_per_s"]), rel=1e-3)
        knees = mine[mine["knee_load_level"].notna()]
        if knees.empty:
            assert "capacity: the knee's load level" not in charts
            continue
        shown = _shown(charts["capacity: the knee's load level"])
        assert shown == [(run, pytest.approx(level)) for run, level in zip(knees["run_id"], knees["knee_load_level"])]
    nightly = capacity[capacity["campaign"] == "nightly"]
    assert set(nightly.loc[nightly["knee_load_level"].notna(), "run_id"]) == {f"nightly-{KNEE_NIGHT:03d}"}
    assert set(nightly.loc[nightly["knee_load_level"].notna(), "knee_load_level"]) == {6}  # vus 6 -> 180: flat


def test_failed_runs_are_grey_and_a_campaign_without_a_knee_says_so(saturated):
    _, site = saturated
    (highest,) = _charts(site, "checkout").values()
    failed = f"checkout-{CHECKOUT_FAILED:03d}"
    assert {p["fill"] == GREY for p in highest["points"] if p["tip"].startswith(failed + ":")} == {True}
    assert {p["fill"] == GREY for p in highest["points"] if not p["tip"].startswith(failed + ":")} == {False}
    assert "No knee found in these runs" in (site.out / "campaigns/checkout/index.html").read_text()
