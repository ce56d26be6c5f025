"""The site's figures against the warehouse, computed independently (pandas over the base tables and public
views, not the site's queries); links that resolve from the folder; every text escaped; incremental builds."""

from __future__ import annotations

import posixpath
from urllib.parse import unquote, urlparse

import pytest
import yaml

from tasks.history.analysis import history_writer
from tasks.history.triage import triage_change
from tasks.site.build import build_site
from tasks.warehouse.ingest import ingest_bundle
from tests.history_nights import write_night
from tests.site_history import CHECKOUT_FAILED, HOSTILE_VERSION, NIGHTLY_NIGHTS, frame, open_regressions
from tests.unit.history.nightly import night
from tests.unit.site.tables import as_dicts, read_page, shown_value


def page(site, path: str):
    return read_page((site.out / path).read_text())


def table_headed(reader, header: str) -> list[list[str]]:
    """The page's one table with this column."""
    (found,) = [t for t in reader.tables if header in t[0]]
    return found


def home_rows(site) -> dict[str, dict[str, str]]:
    (table,) = page(site, "index.html").tables
    return {row["campaign"]: row for row in as_dicts(table)}


def test_home_has_one_row_per_campaign_with_its_last_run(site, site_history):
    runs = frame(site_history, "select run_id, campaign, status, started_at, labels from runs")
    last = runs.sort_values("started_at").groupby("campaign").tail(1).set_index("campaign")
    verdicts = frame(site_history, "select run_id, passed from verdicts where iteration is null")
    rows = home_rows(site)
    assert sorted(rows) == sorted(last.index) == ["checkout", "nightly"]
    for campaign, row in rows.items():
        assert row["run"] == last.loc[campaign, "run_id"]
        assert row["status"] == last.loc[campaign, "status"]
        assert row["labels"] == f"sut_version={dict(last.loc[campaign, 'labels'])['sut_version']}"
        passed = verdicts.loc[verdicts["run_id"] == row["run"], "passed"].dropna().astype(bool)  # null: not judged
        assert row["requirements held / failed"] == f"{passed.sum()} / {(~passed).sum()}"
    assert rows["nightly"]["run"] == f"nightly-{NIGHTLY_NIGHTS - 1:03d}"
    assert rows["nightly"]["requirements held / failed"] == "6 / 0"  # NIGHTLY_REQUIREMENTS all hold on the last night
    assert rows["checkout"]["requirements held / failed"] == "0 / 0"  # it states none
    assert rows["checkout"]["labels"] == f"sut_version={HOSTILE_VERSION}"


def test_home_shows_the_new_regression_and_its_size(site, site_history):
    rows = home_rows(site)
    for campaign, row in rows.items():
        count, worst = open_regressions(site_history, campaign)
        assert row["open regressions (worst)"] == (f"{count} ({worst:+.1f} %)" if count else "0")
    count, worst = open_regressions(site_history, "nightly")
    assert count >= 1 and 10 < worst < 35  # the +20 % latency of night 10


def test_campaign_page_lists_every_run_newest_first(site, site_history):
    runs = frame(site_history, "select run_id, campaign, status, started_at from runs")
    for campaign in ("nightly", "checkout"):
        reader = page(site, f"campaigns/{campaign}/index.html")
        shown = as_dicts(reader.tables[-1])
        expected = runs[runs["campaign"] == campaign].sort_values("started_at", ascending=False)
        assert [r["run"] for r in shown] == list(expected["run_id"])
    failed = {r["run"]: r for r in as_dicts(page(site, "campaigns/checkout/index.html").tables[-1])}
    assert failed[f"checkout-{CHECKOUT_FAILED:03d}"]["verdict"] == "RUN FAILED"
    assert failed[f"checkout-{CHECKOUT_FAILED:03d}"]["out of the history"].startswith("run failed")


def _trend_charts(site, site_history):
    """Each campaign page's trend chart with its campaign, metric and the series values it draws (pandas)."""
    values = frame(site_history, "select * from series_values where host = '(all)' and label = '(all)' "
                                 "and side in ('server', 'client')")
    for campaign in ("nightly", "checkout"):
        charts = [s for s in page(site, f"campaigns/{campaign}/index.html").svgs if s["class"] == "chart"]
        assert len(charts) >= 3, campaign
        for chart, metric in zip(charts, ("p95_ms", "calls_per_s", "error_rate")):
            yield campaign, metric, chart, values[(values["campaign"] == campaign) & (values["metric"] == metric)]


def test_trend_charts_draw_every_point_and_mark_every_change(site, site_history):
    changes = frame(site_history, "select * from change_points where host = '(all)' and label = '(all)' "
                                  "and side in ('server', 'client') and kind = 'change'")
    for campaign, metric, chart, mine in _trend_charts(site, site_history):
        assert chart["circle"] == len(mine)  # every (run, side, iteration) point, greyed ones too
        moved = changes[(changes["campaign"] == campaign) & (changes["metric"] == metric)]
        assert chart["change"] == len(moved)
    (spark,) = [s for s in page(site, "index.html").svgs if s["class"] == "spark"][:1]
    assert spark["polyline"] == 1


def test_trend_points_show_their_run_and_value_on_hover_an_error_rate_in_percent(site, site_history):
    for _, metric, chart, mine in _trend_charts(site, site_history):
        tips = sorted(p["tip"] for p in chart["points"])
        if metric == "error_rate":
            assert tips == sorted(f"{r}: {v * 100:.2f} %" for r, v in zip(mine["run_id"], mine["value"]))
            assert all(0 < v < 0.1 for v in mine["value"])  # fractions: 1 % would read 0.01 unconverted
            assert f"{mine['value'].max() * 100:.3g} %" in chart["text"]  # the y axis's top, in % too
            continue
        shown = sorted((tip.split(": ")[0], float(tip.split(": ")[1].replace(",", ""))) for tip in tips)
        assert shown == sorted((r, round(v, 3)) for r, v in zip(mine["run_id"], mine["value"]))  # to 0.001


def test_event_pages_show_each_series_and_the_triage_command(site, site_history):
    points = frame(site_history, "select * from change_points")
    assert not points.empty
    for event_id, members in points.groupby("event_id"):
        campaign = members["campaign"].iloc[0]
        reader = page(site, f"campaigns/{campaign}/events/{event_id}.html")
        series = as_dicts(table_headed(reader, "p-value"))
        assert len(series) == len(members)
        by_key = {(s["side"], s["host"], s["iteration"], s["label"], s["metric"]): s for s in series}
        for m in members.to_dict("records"):
            row = by_key[(m["side"], m["host"], str(m["iteration"]), m["label"], m["metric"])]
            for column, value in (("before", m["before_value"]), ("after", m["after_value"])):
                assert row[column].endswith(" %") == (m["metric"] == "error_rate")  # a fraction, shown in %
                assert shown_value(row[column]) == pytest.approx(value, rel=1e-3, abs=1e-3)
        assert f"perfcampaign triage {event_id} --acknowledge --note 'WHY'" in reader.code


def test_every_link_is_relative_and_resolves(site):
    for path in site.pages:
        for href in page(site, path).hrefs:
            assert not urlparse(href).scheme, f"{path}: {href}"
            target = site.out / posixpath.dirname(path) / unquote(href)
            assert target.resolve().is_file(), f"{path}: {href}"


def test_text_from_bundles_is_escaped_on_every_page(site):
    texts = {path: (site.out / path).read_text() for path in site.pages}
    assert not any("<b>bold" in text for text in texts.values())
    assert "sut_version=2.0 &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; &#x27;x&#x27;" in texts["index.html"]


def test_a_rebuild_rewrites_only_the_pages_that_changed(copy, tmp_path):
    first = build_site(copy, tmp_path / "site")
    assert first.written == first.pages
    assert build_site(copy, tmp_path / "site").written == []
    count, _ = open_regressions(copy, "nightly")
    event = frame(copy, "select event_id from change_events where campaign = 'nightly' and kind = 'change' "
                        "and direction = 'regression' and status = 'new' order by event_id").iloc[0, 0]
    with history_writer(copy) as con:
        triage_change(con, event, "acknowledged", "seen <in> the morning")
    again = build_site(copy, tmp_path / "site")
    assert sorted(again.written) == ["campaigns/nightly/events/" + event + ".html", "campaigns/nightly/index.html",
                                     "index.html"]
    assert home_rows(again)["nightly"]["open regressions (worst)"].startswith(str(count - 1) if count > 1 else "0")
    assert "seen &lt;in&gt; the morning" in (tmp_path / "site" / "campaigns/nightly/index.html").read_text()


def test_a_run_made_under_prefect_links_its_flow_run(copy, tmp_path):
    """run.yaml's `prefect.flow_run_url` (kept in runs.manifest) becomes a link on the home row and in the runs
    table, escaped; a run made outside Prefect, or whose flow run has no http(s) page, gets none."""
    url = 'https://prefect.example/flow-runs/flow-run/0d1e?tab=Logs&x="1"'
    given = {NIGHTLY_NIGHTS: {"flow_run_id": "9f"}, NIGHTLY_NIGHTS + 1: {"flow_run_id": "0d1e", "flow_run_url": url}}
    for n, prefect in given.items():
        bundle = write_night(tmp_path / "more", n, night(n))
        manifest = yaml.safe_load((bundle / "run.yaml").read_text())
        (bundle / "run.yaml").write_text(yaml.safe_dump({**manifest, "prefect": prefect}, sort_keys=False))
        ingest_bundle(bundle, copy, progress=lambda message: None)
    site = build_site(copy, tmp_path / "site")
    no_url, with_url = (f"nightly-{n:03d}" for n in given)
    stored = frame(copy, "select run_id, manifest ->> '$.prefect.flow_run_id', coalesce(manifest ->> "
                         "'$.prefect.flow_run_url', '-') from runs where (manifest -> 'prefect') is not null order by 1")
    assert stored.values.tolist() == [[no_url, "9f", "-"], [with_url, "0d1e", url]]
    campaign_page = page(site, "campaigns/nightly/index.html")
    runs = as_dicts(campaign_page.tables[-1])
    assert [r["run"] for r in runs if "flow run" in r["links"]] == [with_url]
    assert campaign_page.hrefs.count(url) == 1
    home = home_rows(site)
    assert home["nightly"]["run"] == with_url and home["nightly"]["links"].endswith("flow run")
    assert "flow run" not in home["checkout"]["links"]
    assert page(site, "index.html").hrefs.count(url) == 1
    escaped = 'href="https://prefect.example/flow-runs/flow-run/0d1e?tab=Logs&amp;x=&quot;1&quot;"'
    assert escaped in (site.out / "index.html").read_text()
    assert escaped in (site.out / "campaigns/nightly/index.html").read_text()


def test_the_event_page_shows_every_triage_newest_first(copy, tmp_path):
    """Two triage calls on one event: both kept with their time and note, the latest is the status."""
    event = frame(copy, "select event_id, series from change_events where campaign = 'nightly' and kind = 'change' "
                        "order by event_id").iloc[0]
    with history_writer(copy) as con:
        triage_change(con, event["event_id"], "acknowledged", "seen <in> the morning")
        triage_change(con, event["event_id"], "invalid", "a noisy neighbour")
    kept = frame(copy, "select t.* from change_triage t join detected_changes d using (change_id) "
                       f"where d.event_id = '{event['event_id']}'")
    assert len(kept) == 2 * event["series"]
    decisions = kept.groupby(["triaged_at", "status", "note"]).size().reset_index().sort_values("triaged_at")
    assert list(decisions["status"]) == ["acknowledged", "invalid"]
    assert list(decisions[0]) == [event["series"]] * 2
    current = frame(copy, f"select distinct status, triage_note from change_points where event_id = '{event['event_id']}'")
    assert current.values.tolist() == [["invalid", "a noisy neighbour"]]
    site = build_site(copy, tmp_path / "site")
    reader = page(site, f"campaigns/nightly/events/{event['event_id']}.html")
    shown = as_dicts(table_headed(reader, "triaged (UTC)"))
    newest_first = decisions.iloc[::-1]
    assert [(r["triaged (UTC)"], r["status"], r["note"], r["change points"]) for r in shown] == [
        (at.tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S"), status, note, str(count))
        for at, status, note, count in newest_first.itertuples(index=False)]
    text = (site.out / f"campaigns/nightly/events/{event['event_id']}.html").read_text()
    assert "seen &lt;in&gt; the morning" in text and "<in>" not in text
    assert as_dicts(table_headed(reader, "largest"))[0]["status"] == "invalid"
