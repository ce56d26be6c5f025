"""Load tool command lines: k6 execution segments over generators, JMeter's -J properties and nodes."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from tasks.loadtools.base import LoadToolError
from tasks.loadtools.config import Load
from tasks.loadtools.jmeter import JMeterTool
from tasks.loadtools.k6 import K6Tool, execution_segments


def test_execution_segments_cover_the_whole_load_once():
    flags = execution_segments(3)
    segments = [f[1] for f in flags]
    assert segments == ["0:1/3", "1/3:2/3", "2/3:1"]
    assert {f[3] for f in flags} == {"0,1/3,2/3,1"}
    total = sum(Fraction(b) - Fraction(a) for a, b in (s.split(":") for s in segments))
    assert total == 1
    assert execution_segments(1) == [[]]


def test_k6_command_per_generator():
    spec = Load(tool="k6", binary="/v/k6", script="infra/k6/echo.js", generators=["g1", "g2"], duration_s=20,
                env={"TARGETS": "http://a"}, steps=[{"vus": 50, "message_size": 1024}])
    commands = K6Tool(spec, {}, "/w/run", Path("/repo")).commands(3, {"vus": 50, "message_size": 1024})
    g1 = commands["g1"]
    assert g1[:6] == ["/v/k6", "run", "--quiet", "--no-usage-report", "--address", ""]
    assert "json=/w/run/iter3/g1/k6.json.gz" in g1 and g1[g1.index("--summary-export") + 1] == "/w/run/iter3/g1/k6-summary.json"
    assert g1[g1.index("--execution-segment") + 1] == "0:1/2"
    assert commands["g2"][commands["g2"].index("--execution-segment") + 1] == "1/2:1"
    for pair in ("VUS=50", "MESSAGE_SIZE=1024", "TARGETS=http://a", "DURATION_S=20", "DURATION=20s"):
        assert pair in g1
    assert g1[-1] == "/w/run/echo.js"


def test_k6_runs_a_step_on_its_nodes_generators_and_splits_the_load_between_them():
    spec = Load(tool="k6", script="infra/k6/echo.js", generators=["g1", "g2", "g3"], duration_s=20,
                steps=[{"nodes": 2, "threads": 4}])
    tool = K6Tool(spec, {}, "/w/run", Path("/repo"))
    commands = tool.commands(1, {"nodes": 2, "threads": 4})
    assert sorted(commands) == ["g1", "g2"]
    assert commands["g2"][commands["g2"].index("--execution-segment") + 1] == "1/2:1"
    assert "NODES=2" in commands["g1"] and "THREADS=4" in commands["g1"]
    assert sorted(tool.commands(1, {"vus": 3})) == ["g1", "g2", "g3"]
    with pytest.raises(LoadToolError, match="asks for 4 nodes; the campaign has 3 generators"):
        tool.commands(1, {"nodes": 4, "threads": 5})


def test_jmeter_runs_on_nodes_generators_with_properties():
    spec = Load(tool="jmeter", script="infra/jmeter/nas-notify.jmx", generators=["j1", "j2", "j3"], duration_s=900,
                steps=[{"nodes": 2, "threads": 10}])
    tool = JMeterTool(spec, {}, "/w/run", Path("/repo"))
    commands = tool.commands(2, {"nodes": 2, "threads": 10})
    assert sorted(commands) == ["j1", "j2"]
    assert commands["j1"] == [
        "jmeter", "-n", "-t", "/w/run/nas-notify.jmx", "-l", "/w/run/iter2/j1/results.jtl", "-j", "/w/run/iter2/j1/jmeter.log",
        "-Jduration_s=900", "-Jnodes=2", "-Jthreads=10",
    ]
    every = tool.commands(1, {"threads": 5})
    assert sorted(every) == ["j1", "j2", "j3"]
    assert "-Jnodes=3" in every["j1"]  # a plan shares its rate between all the generators a step runs on
    with pytest.raises(LoadToolError, match="asks for 4 nodes; the campaign has 3 generators"):
        tool.commands(1, {"nodes": 4, "threads": 5})


def test_jmeter_summary_of_a_real_log(samples, tmp_path):
    """The ramp's throughput for a JMeter step comes from the last `summary =` line of jmeter.log."""
    spec = Load(tool="jmeter", script="p.jmx", generators=["j1"], duration_s=60, steps=[{"threads": 1}])
    log = samples / "jmeter" / "perfplugin-jmeter.log"
    (tmp_path / "j1").mkdir()
    (tmp_path / "j1" / "jmeter-iter1.log").write_bytes(log.read_bytes())
    result = JMeterTool(spec, {}, "/w", Path("/repo")).summarize(
        1, {"threads": 1}, 60.0, tmp_path, [{"kind": "jmeter_log", "path": "j1/jmeter-iter1.log"}])
    totals = [line for line in log.read_text().splitlines() if "summary =" in line]
    last = totals[-1].split("summary =")[1].split()
    assert result.calls == int(last[0])
    assert result.metrics["avg_ms"] == float(last[last.index("Avg:") + 1])
