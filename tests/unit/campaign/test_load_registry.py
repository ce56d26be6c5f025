"""The registry of load tools, and the load's own window read from each tool's result files."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone

import pandas as pd
import pytest

from tasks.bundle.kinds import HOST_SAMPLE_KINDS, KINDS
from tasks.bundle.load_window import LoadWindow, jtl_window, k6_json_window
from tasks.loadtools.registry import TOOLS, tool_kind
from tasks.stage.config import Monitor


def test_every_tool_writes_known_source_kinds_and_an_unknown_one_is_named():
    assert TOOLS["jmeter"].writes == ("jtl", "jmeter_log") and TOOLS["k6"].writes == ("k6_json", "k6_summary")
    assert all(kind in KINDS for entry in TOOLS.values() for kind in entry.writes)
    with pytest.raises(ValueError, match=r"load.tool: 'gatling' is not a load tool perfcampaign runs \(one of: k6, jmeter\)"):
        tool_kind("gatling")


def test_host_sample_kinds_come_from_the_source_kind_registry():
    assert HOST_SAMPLE_KINDS == ("vmstat", "jstat", "docker_stats", "sar", "pidstat", "procfs")
    for kind in HOST_SAMPLE_KINDS:
        assert Monitor(kind=kind, pid_file="p").kind == kind
    with pytest.raises(ValueError, match="kind"):
        Monitor(kind="k6_json")


def _utc(epoch_ms: int) -> datetime:
    return datetime.fromtimestamp(epoch_ms / 1000, timezone.utc)


@pytest.mark.parametrize("name", ["perfplugin-multiLineCSV.jtl", "taurus-kpi1.jtl"])
def test_jtl_window_csv_is_first_start_to_last_end(samples, name):
    path = samples / "jmeter" / name  # real JMeter CSV (quoted fields across lines in the first)
    frame = pd.read_csv(path)
    window = jtl_window(path)
    assert window == LoadWindow(len(frame), _utc(frame["timeStamp"].min()),
                                _utc((frame["timeStamp"] + frame["elapsed"]).max()))


def test_jtl_window_xml_reads_top_level_samples_only(tmp_path):
    path = tmp_path / "r.jtl"
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<testResults version="1.2">\n'
                    '<httpSample t="40" lt="3" ts="2000" s="true" lb="a" rc="200">\n'
                    '  <httpSample t="900" ts="1" lb="embedded"/>\n</httpSample>\n'
                    '<sample t="5" ts="2500" s="false" lb="b"/>\n</testResults>\n')
    assert jtl_window(path) == LoadWindow(2, _utc(2000), _utc(2505))


def test_k6_window_starts_each_request_its_duration_before_its_point(tmp_path):
    path = tmp_path / "k6.json.gz"
    points = [("http_req_duration", "2026-01-01T00:00:01.5Z", 500.0), ("http_reqs", "2026-01-01T00:00:00Z", 1),
              ("http_req_duration", "2026-01-01T00:00:03.25Z", 250.0)]
    with gzip.open(path, "wt") as out:
        out.write(json.dumps({"type": "Metric", "metric": "http_req_duration", "data": {}}) + "\n")
        for metric, time, value in points:
            out.write(json.dumps({"type": "Point", "metric": metric, "data": {"time": time, "value": value}}) + "\n")
    assert k6_json_window(path) == LoadWindow(2, datetime(2026, 1, 1, 0, 0, 1, tzinfo=timezone.utc),
                                              datetime(2026, 1, 1, 0, 0, 3, 250000, tzinfo=timezone.utc))


def test_an_empty_result_file_has_no_calls(tmp_path):
    path = tmp_path / "empty.jtl"
    path.write_text("timeStamp,elapsed,label\n")
    assert jtl_window(path) == LoadWindow(0) and (LoadWindow(0) + jtl_window(path)).calls == 0
