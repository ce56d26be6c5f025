"""The ramp: steps it plans, and the stop rule on known throughputs."""

from __future__ import annotations

import pytest

from tasks.bundle.load import load_level
from tasks.bundle.manifest import CapacityOptions, Requirement
from tasks.campaign.ramp import planned_steps, stop_reason
from tasks.loadtools.base import StepResult
from tasks.loadtools.config import Load

RAMP = {"start": {"vus": 2, "message_size": 7}, "factor": 2, "max_steps": 5}


def _load(**ramp) -> Load:
    return Load(tool="k6", script="s.js", generators=["g"], duration_s=10, ramp={**RAMP, **ramp})


def _result(index, vus, calls_per_s, **metrics) -> StepResult:
    return StepResult(index, {"vus": vus}, 10.0, int(calls_per_s * 10), 0, metrics)


def test_planned_steps_multiply_or_add():
    assert [s["vus"] for s in planned_steps(_load())] == [2, 4, 8, 16, 32]
    assert planned_steps(_load())[3] == {"vus": 16, "message_size": 7}
    assert [s["vus"] for s in planned_steps(_load(factor=None, increment=3))] == [2, 5, 8, 11, 14]


def test_saturation_stops_with_the_reason():
    load = _load()
    results = [_result(1, 2, 100), _result(2, 4, 195), _result(3, 8, 380)]
    assert stop_reason(load, results, []) is None
    results.append(_result(4, 16, 391.4))  # +3 % throughput for +100 % users
    assert stop_reason(load, results, []) == "throughput grew 3 % for 100 % more vus: saturated at step 4"


def test_a_broken_client_requirement_stops_but_a_server_one_waits_for_the_warehouse():
    load = _load()
    reqs = [Requirement(id="p95", metric="p95_ms", op="<", threshold=500, side="client"),
            Requirement(id="srv", metric="avg_ms", op="<", threshold=1, side="server")]
    assert stop_reason(load, [_result(1, 2, 100, p95_ms=120.0, avg_ms=50.0)], reqs) is None
    reason = stop_reason(load, [_result(1, 2, 100, p95_ms=120.0), _result(2, 4, 190, p95_ms=730.0)], reqs)
    assert reason == "requirement p95 broke at step 2: p95_ms 730, limit < 500"


def test_the_stop_rule_counts_dropped_calls_as_failed_when_the_requirement_says_so():
    load = _load()
    delivered = Requirement(id="delivered", metric="error_rate_with_dropped", op="<", threshold=0.05, side="client")
    fine = StepResult(1, {"vus": 2}, 10.0, 1000, 10, {"error_rate": 0.01}, dropped=20)
    assert stop_reason(load, [fine], [delivered]) is None  # (10 + 20) / 1020 = 2.9 %
    short = StepResult(2, {"vus": 4}, 10.0, 1000, 10, {"error_rate": 0.01}, dropped=100)
    assert stop_reason(load, [fine, short], [delivered]) == (
        "requirement delivered broke at step 2: error_rate_with_dropped 0.1, limit < 0.05")  # 110 / 1100


def test_a_failure_ratio_with_dropped_calls_is_not_scoped_to_a_label_or_a_server():
    from pydantic import ValidationError

    for scope in ({"side": "client", "label": "/echo"}, {"side": "server", "host": "app1"}):
        with pytest.raises(ValidationError, match="dropped calls carry no label and reached no server"):
            Requirement(id="d", metric="error_rate_with_dropped", op="<", threshold=0.05, **scope)
    Requirement(id="d", metric="error_rate_with_dropped", op="<", threshold=0.05, side="client", host="lg1")


def test_the_stop_rule_judges_a_requirement_at_its_stated_load_and_never_a_scoped_one():
    load = _load()
    results = [_result(1, 2, 100, p95_ms=700.0), _result(2, 4, 190, p95_ms=900.0)]
    at_4 = Requirement(id="at4", metric="p95_ms", op="<", threshold=800, side="client", at_load={"vus": 4})
    assert stop_reason(load, results[:1], [at_4]) is None  # 700 ms at 2 vus: not its load
    assert stop_reason(load, results, [at_4]) == "requirement at4 broke at step 2: p95_ms 900, limit < 800"
    at_step_1 = Requirement(id="at1", metric="p95_ms", op="<", threshold=800, side="client", at={"iteration": 1})
    assert stop_reason(load, results, [at_step_1]) is None
    # the summary covers every label: a label's requirement waits for the warehouse
    scoped = Requirement(id="pull", metric="p95_ms", op="<", threshold=1, side="client", label="/api/pull*")
    assert stop_reason(load, results, [scoped]) is None


def test_an_open_model_step_that_falls_short_of_its_offered_load_is_saturated():
    load = Load(tool="k6", script="s.js", generators=["g"], duration_s=10,
                ramp={"start": {"rate_per_s": 10}, "key": "rate_per_s", "factor": 2})
    held = [StepResult(1, {"rate_per_s": 10}, 10.0, 100, 0), StepResult(2, {"rate_per_s": 20}, 10.0, 199, 0)]
    assert stop_reason(load, held, []) is None
    # 40/s offered, 27/s achieved: +36 % throughput for +100 % load, and 270 of 400 calls made
    short = held + [StepResult(3, {"rate_per_s": 40}, 10.0, 270, 0, {}, 130)]
    assert stop_reason(load, short, []) == "made 67.5 % of the calls offered (27.0 of 40.0 calls/s, 130 dropped): saturated at step 3"
    # the campaign's capacity options are the stop rule's: 199 of 200 calls made
    held[1].dropped = 1
    assert stop_reason(load, held, [], CapacityOptions(min_achieved_ratio=0.999)) == (
        "made 99.5 % of the calls offered (19.9 of 20.0 calls/s, 1 dropped): saturated at step 2")


def test_max_steps_and_fixed_steps():
    load = _load(max_steps=2)
    assert stop_reason(load, [_result(1, 2, 100), _result(2, 4, 199)], []) == "reached max_steps (2)"
    fixed = Load(tool="k6", script="s.js", generators=["g"], duration_s=1, steps=[{"vus": 1}, {"vus": 2}])
    assert stop_reason(fixed, [_result(1, 1, 10)], []) is None
    assert stop_reason(fixed, [_result(1, 1, 10), _result(2, 2, 10)], []) == "all steps run"


@pytest.mark.parametrize(
    ("load", "key", "level"),
    [({"vus": 50}, None, 50), ({"nodes": 2, "threads": 5}, None, 10), ({"users": 7}, None, 7),
     ({"vus": 5, "rate": 30}, "rate", 30), ({"message_size": 7}, None, None)],
)
def test_load_level(load, key, level):
    assert load_level(load, key) == level


def test_steps_until_saturated_stop_at_the_first_step_that_does_not_scale_in_nodes_x_threads():
    steps = [{"nodes": 1, "threads": 2}, {"nodes": 1, "threads": 4}, {"nodes": 2, "threads": 4}, {"nodes": 2, "threads": 8}]
    load = Load(tool="k6", script="s.js", generators=["g1", "g2"], duration_s=10, steps=steps, until_saturated=True)
    result = lambda i, cps: StepResult(i, steps[i - 1], 10.0, int(cps * 10), 0, {})  # noqa: E731
    assert stop_reason(load, [result(1, 100), result(2, 195)], []) is None
    assert stop_reason(load, [result(1, 100), result(2, 195), result(3, 210)], []) == (
        "throughput grew 8 % for 100 % more load: saturated at step 3")  # 4 -> 8 nodes x threads
    assert stop_reason(load, [result(i, 100 * 2 ** (i - 1)) for i in (1, 2, 3, 4)], []) == "all steps run"
    without = Load(tool="k6", script="s.js", generators=["g1", "g2"], duration_s=10, steps=steps)
    assert stop_reason(without, [result(1, 100), result(2, 195), result(3, 210)], []) is None
    with pytest.raises(ValueError, match="until_saturated is for steps"):
        Load(tool="k6", script="s.js", generators=["g"], duration_s=10, ramp=RAMP, until_saturated=True)
