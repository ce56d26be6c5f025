"""The requirement charts' change points against the history read with pandas: each requirement of the nightly
campaign's last run (tests/site_history.py, NIGHTLY_REQUIREMENTS) mapped here to the history's series of its side,
metric and scope (the whole side, a host, an exact label), the iterations it judged in each run (`verdicts`), and the
`change_points` rows of those series at that run: a dashed line per run and kind (red a change, orange a pending
one), a cross for outliers, the label giving each kind's % (the range over iterations), the iterations and the labels
that changed; a requirement the history has no series of says so under its chart."""

from __future__ import annotations

import re

import pandas as pd

from tests.site_history import NIGHTLY_NIGHTS, frame
from tests.unit.site.marks import iterations_in, shown_marks
from tests.unit.site.tables import read_page

ANALYSED = {"avg_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms", "calls_per_s", "error_rate"}  # history.md
LAST = f"nightly-{NIGHTLY_NIGHTS - 1:03d}"


def series_of(req: dict) -> tuple[str, str] | None:
    """The (host, label) of the history's series of the requirement's scope; None when it has none."""
    present = {k: req[k] for k in ("label", "label_regex", "host", "role", "k6_metric") if pd.notna(req[k])}
    if "k6_metric" in present or req["metric"] not in ANALYSED or {"label_regex", "role"} & set(present):
        return None
    if "label" in present and ("host" in present or re.search(r"[*?\[]", present["label"])):
        return None
    return present.get("host", "(all)"), present.get("label", "(all)")


def expected(site_history) -> tuple[dict[str, dict[tuple[str, str], pd.DataFrame]], set[str]]:
    """{requirement: {(run, kind): its change points}} and the requirements without series."""
    requirements = frame(site_history, f"select * from requirements where run_id = '{LAST}'")
    judged = frame(site_history, "select run_id, requirement_id, iteration from verdicts "
                                 "where iteration is not null and is_judged")
    changes = frame(site_history, "select * from change_points where campaign = 'nightly'")
    changes["kind"] = changes["kind"].where((changes["kind"] == "outlier") | (changes["status"] != "pending"), "pending")
    marks, unmapped = {}, set()
    for req in requirements.to_dict("records"):
        found = series_of(req)
        if found is None:
            unmapped.add(req["requirement_id"])
            continue
        mine = judged[judged["requirement_id"] == req["requirement_id"]]
        moved = changes[(changes["side"] == req["side"]) & (changes["metric"] == req["metric"])
                        & (changes["host"] == found[0]) & (changes["label"] == found[1])]
        moved = moved.merge(mine, on=["run_id", "iteration"])
        marks[req["requirement_id"]] = {key: rows for key, rows in moved.groupby(["run_id", "kind"])}
    return marks, unmapped


def charts(site) -> dict[str, dict]:
    reader = read_page((site.out / "campaigns/nightly/index.html").read_text())
    return {s["text"][0].split(": ")[0]: s for s in reader.svgs if s["text"] and ": " in s["text"][0]}


def test_each_requirement_marks_the_change_points_of_its_series(site, site_history):
    marks, unmapped = expected(site_history)
    drawn = charts(site)
    assert set(marks) | unmapped == set(drawn) - {"capacity"}
    seen = set()
    for requirement, moved in marks.items():
        shown = shown_marks(drawn[requirement])
        runs = {run for run, _ in moved}
        assert {key for key in shown if key[0] in runs} == set(moved), requirement
        assert set(shown) == set(moved), requirement  # no mark elsewhere
        for run in runs:
            # the run's label (on the first of its marks; a cross's hover text) holds every kind's figures
            text = next(t for (r, _), t in shown.items() if r == run and t)
            kinds = {kind: rows for (r, kind), rows in moved.items() if r == run}
            figures = sorted(f for rows in kinds.values() for f in {f"{rows['change_pct'].agg(end):+.1f}" for end in ("min", "max")})
            assert sorted(re.findall(r"([+-]\d+\.\d) %", text)) == figures, (requirement, run, text)
            assert iterations_in(text) == sorted(i for rows in kinds.values() for i in rows["iteration"])
            for labels in pd.concat(kinds.values())["label_changes"].dropna().unique():
                assert labels in text
            assert ("pending " in text) == ("pending" in kinds)
            seen.update((kind, rows["iteration"].nunique() > 1) for kind, rows in kinds.items())
    assert {("change", True), ("change", False), ("pending", False), ("outlier", True)} <= seen  # the data has each


def test_a_requirement_the_history_has_no_series_of_says_so(site, site_history):
    _, unmapped = expected(site_history)
    assert unmapped == {"errors-with-dropped", "p95-echo-glob"}
    text = (site.out / "campaigns/nightly/index.html").read_text()
    assert text.count("The history does not analyse error_rate_with_dropped") == 1
    assert text.count("The history has no series of label *18081*") == 1
    drawn = charts(site)
    assert all(not drawn[r]["marks"] and not drawn[r]["crosses"] for r in unmapped)
