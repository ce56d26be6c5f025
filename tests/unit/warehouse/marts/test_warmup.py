"""A warm-up: the first seconds of every iteration are kept and marked, and left out of its statistics,
its rates (duration_s is the time after it) and its verdicts; checked against the plan of the log."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tasks.warehouse.connection import open_warehouse
from tasks.warehouse.ingest import ingest_bundle
from tests.bundles import write_bundle
from tests.lakeserver import on_both_engines
from tests.unit.warehouse.marts.test_verdicts import PLAN, START, _log

WARMUP_S = 2


@pytest.fixture(scope="module")
def warehouse_file(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("warmup")
    iterations = [{"index": i, "start": (START + timedelta(seconds=20 * (i - 1))).isoformat(),
                   "end": (START + timedelta(seconds=20 * (i - 1) + 10)).isoformat(), "load": {"vus": 10 * i},
                   "warmup_s": WARMUP_S} for i in PLAN]
    requirements = [{"id": "rate", "metric": "calls_per_s", "op": ">=", "threshold": 1, "side": "server", "label": "/api/1"}]
    source = {"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
    root = write_bundle(tmp_path / "b", {"access.log": _log()}, [source], iterations, requirements)
    ingest_bundle(root, tmp_path / "w.duckdb", progress=lambda m: None)
    return tmp_path / "w.duckdb"


warehouse = on_both_engines("warehouse_file", "warmup")  # the marts' checks on a file and on a lake


def _kept(iteration: int) -> list[int]:
    """The calls n of an iteration logged at or after its warm-up: at 10 * n / calls s, logged to the second."""
    calls = PLAN[iteration][0]
    return [n for n in range(calls) if int(10 * n / calls) >= WARMUP_S]


def test_a_warm_up_leaves_out_exactly_its_rows(warehouse):
    with open_warehouse(warehouse) as con:
        summary = {i: (calls, cps, errors) for i, calls, cps, errors in con.execute(
            "select iteration, calls, calls_per_s, errors from iteration_summary").fetchall()}
        marked = dict(con.execute("select iteration, count(*) from requests where is_warmup group by 1").fetchall())
        total = dict(con.execute("select iteration, count(*) from requests group by 1").fetchall())
        durations = dict(con.execute("select iteration, duration_s from iterations").fetchall())
        verdicts = dict(con.execute("select iteration, measured from verdicts where iteration is not null").fetchall())
    for i, (calls, _) in PLAN.items():
        kept = _kept(i)
        assert total[i] == calls and marked[i] == calls - len(kept)  # kept in requests, and marked
        assert durations[i] == 10 - WARMUP_S
        assert summary[i] == (len(kept), pytest.approx(len(kept) / 8), sum(n % 100 == 0 for n in kept))
        assert verdicts[i] == pytest.approx(sum(n % 3 == 1 for n in kept) / 8)


def test_a_warm_up_as_long_as_the_iteration_is_refused(tmp_path):
    from tasks.bundle.manifest import ManifestError, load_manifest

    iterations = [{"index": 1, "start": START.isoformat(), "end": (START + timedelta(seconds=10)).isoformat(), "warmup_s": 10}]
    source = {"kind": "access_log", "host": "app", "path": "access.log", "preset": "tomcat_common_d"}
    root = write_bundle(tmp_path / "b", {"access.log": _log()}, [source], iterations)
    with pytest.raises(ManifestError, match="warmup_s 10 leaves nothing of the iteration to measure"):
        load_manifest(root)
