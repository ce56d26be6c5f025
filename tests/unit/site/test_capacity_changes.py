"""The capacity chart's change points against the history read with pandas: five more nightly runs (capacity -20 %
from night 18, tests/unit/history/nightly.py) ingested into a copy of the two campaigns' warehouse and analysed; the
highest throughput of a run is the history's calls_per_s of its side (all hosts and labels) at the iteration it was
measured in, so each `change_points` row of that series at that run is a mark: a dashed line (red, orange when
pending) or a cross, its text naming the side, the % and the iteration."""

from __future__ import annotations

import re

import pytest

from tasks.history.analysis import analyse_run
from tasks.site.build import build_site
from tests.history_nights import write_night
from tests.site_history import NIGHTLY_NIGHTS, copy_with, frame
from tests.unit.history.nightly import night
from tests.unit.site.marks import shown_marks
from tests.unit.site.tables import read_page

LAST = NIGHTLY_NIGHTS + 4  # nights 16-20: the capacity drop of night 18 and two nights after it


@pytest.fixture(scope="module")
def dropped(site_history, tmp_path_factory):
    """The copy with nights 16 to 20, analysed after the last, and its site."""
    root = tmp_path_factory.mktemp("capacity-changes")
    warehouse = copy_with(site_history, root, (write_night(root / "more", n, night(n))
                                               for n in range(NIGHTLY_NIGHTS, LAST + 1)))
    analyse_run(warehouse, f"nightly-{LAST:03d}")
    return warehouse, build_site(warehouse, root / "site")


def test_the_highest_throughput_marks_the_change_points_of_its_series(dropped):
    warehouse, site = dropped
    moved = frame(warehouse, """
        select c.run_id, c.side, c.iteration, c.change_pct, c.label_changes,
            case when c.kind = 'outlier' then 'outlier' when c.status = 'pending' then 'pending' else 'change' end as kind
        from capacity as k
        join runs using (run_id)
        join change_points as c
            on c.run_id = k.run_id and c.side = k.side and c.iteration = k.max_iteration and c.host = '(all)'
            and c.label = '(all)' and c.metric = 'calls_per_s'
        where runs.campaign = 'nightly'""")
    assert set(moved["run_id"]) == {"nightly-018"}  # the capacity drop, on both sides
    reader = read_page((site.out / "campaigns/nightly/index.html").read_text())
    (chart,) = [s for s in reader.svgs if s["text"] and s["text"][0] == "capacity: highest throughput (calls/s)"]
    shown = shown_marks(chart)
    assert set(shown) == set(zip(moved["run_id"], moved["kind"]))
    for run, rows in moved.groupby("run_id"):
        text = next(t for (r, _), t in shown.items() if r == run and t)
        assert sorted(re.findall(r"([+-]\d+\.\d) %", text)) == sorted(f"{p:+.1f}" for p in rows["change_pct"])
        for side, iteration in zip(rows["side"], rows["iteration"]):
            assert re.search(rf"{side}: [^;]* %, it {iteration}\b", text), text
        for labels in rows["label_changes"].dropna().unique():
            assert labels in text
    assert (moved["change_pct"] < -10).all()  # -20 % in truth
