"""Unknown keys anywhere in a campaign file or a manifest are errors naming the key, its line and the nearest
valid key; the named thresholds are one list that every reader of `thresholds:` agrees with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tasks.bundle.manifest import ManifestError, load_manifest
from tasks.bundle.thresholds import THRESHOLDS
from tasks.campaign.spec import CampaignError, load_campaign

ROOT = Path(__file__).parents[3]
DEMO = (ROOT / "campaigns" / "demo.yaml").read_text()


def _line_of(text: str, needle: str) -> int:
    """The 1-based line of the first occurrence of `needle` (computed from the text, not the loader)."""
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize(
    ("old", "new", "field", "nearest"),
    [
        ("scenario:", "scenaro:", "scenaro", "scenario"),  # demo.yaml pins no workdir (one folder per run)
        ("    factor: 2", "    factr: 2", "load.ramp.factr", "factor"),
        ("stop: {on_requirement_broken", "stop: {on_requirement_broke", "load.ramp.stop.on_requirement_broke",
         "on_requirement_broken"),
        ("  app2: {transport: local, role: sut}", "  app2: {transport: local, role: sut, adress: x}",
         "hosts.app2.local.adress", None),
        ("host: app2, timeout_s: 60}", "host: app2, timeot_s: 60}", "provision.3.wait_http.timeot_s", "timeout_s"),
        ("  loadgen:\n    - {kind: vmstat, interval_s: 1}", "  loadgen:\n    - {kind: vmstat, intervall_s: 1}",
         "monitors.loadgen.0.intervall_s", "interval_s"),
        ("  uri: ./perfcampaign-data", "  uri: ./perfcampaign-data\n  enpoint_url: http://x", "store.enpoint_url",
         "endpoint_url"),
        ("schedule: {cron:", "schedule: {corn:", "schedule.corn", "cron"),
        ("side: client}", "side: client, min_call_per_s: 3}", "requirements.2.min_call_per_s", "min_calls_per_s"),
        ("store:", "thresholds: {old_gen_slope_max_pct_per_h: 2}\nstore:", "thresholds.old_gen_slope_max_pct_per_h",
         "old_gen_growth_max_pct_per_h"),
    ],
)
def test_an_unknown_campaign_key_names_its_line_and_the_nearest_key(tmp_path, old, new, field, nearest):
    assert old in DEMO
    text = DEMO.replace(old, new, 1)
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(CampaignError) as error:
        load_campaign(path)
    message = str(error.value)
    key = field.rsplit(".", 1)[-1]
    assert message.startswith(f"{path}: invalid campaign")
    assert f"line {_line_of(text, key)}: {field}: unknown key '{key}'" in message, message
    if nearest:
        assert f"did you mean '{nearest}'?" in message
    else:  # nothing close: the valid keys are listed
        assert "valid keys: " in message and "role" in message


MANIFEST = """\
format: 1
run_id: r1
campaign: c
iterations:
  - {index: 1, start: '2026-12-01T02:00:00Z', end: '2026-12-01T02:15:00Z', load: {vus: 10}}
requirements:
  - {id: avg, metric: avg_ms, op: '<', threshold: 250, side: server}
thresholds:
  slow_call_ms: 500
sources:
  - kind: access_log
    host: app1
    path: access.log
    preset: tomcat_common_d
    duration_unit: ms
capacity: {load_key: vus}
"""


@pytest.mark.parametrize(
    ("old", "new", "field", "nearest"),
    [
        ("    duration_unit: ms", "    duration_units: ms", "sources.0.duration_units", "duration_unit"),
        ("  slow_call_ms: 500", "  slow_calls_ms: 500", "thresholds.slow_calls_ms", "slow_call_ms"),
        ("side: server}", "side: server, treshold: 3}", "requirements.0.treshold", "threshold"),
        ("load: {vus: 10}}", "load: {vus: 10}, ends: 3}", "iterations.0.ends", "end"),
        ("capacity: {load_key", "capacity: {load_keys", "capacity.load_keys", "load_key"),
        ("campaign: c", "campaing: c", "campaing", "campaign"),
    ],
)
def test_an_unknown_manifest_key_names_its_line_and_the_nearest_key(tmp_path, old, new, field, nearest):
    (tmp_path / "access.log").write_text("")
    text = MANIFEST.replace(old, new, 1)
    (tmp_path / "run.yaml").write_text(text)
    with pytest.raises(ManifestError) as error:
        load_manifest(tmp_path)
    key = field.rsplit(".", 1)[-1]
    assert f"line {_line_of(text, key + ':')}: {field}: unknown key '{key}'; did you mean '{nearest}'?" in str(error.value)


def test_a_source_option_of_another_kind_is_refused(tmp_path):
    """`unit` is a vmstat option: on an access log it would be ignored, so it is an error there."""
    (tmp_path / "access.log").write_text("")
    (tmp_path / "run.yaml").write_text(MANIFEST.replace("    duration_unit: ms", "    unit: M"))
    with pytest.raises(ManifestError, match=r"line 15: sources.0.unit: unknown key 'unit'"):
        load_manifest(tmp_path)


def _names_read(pattern: str, folders: list[str], suffix: str) -> set[str]:
    found = set()
    for folder in folders:
        for path in (ROOT / folder).rglob(f"*{suffix}"):
            found |= set(re.findall(pattern, path.read_text()))
    return found


def test_the_thresholds_list_is_what_the_code_and_sql_read():
    """Every threshold a model or the validation reads is in the list (so it is accepted), every name in
    the list is read somewhere (so it is not accepted in vain), and the SQL defaults are the list's."""
    in_sql = _names_read(r"(?:given|'thresholds') ->> '([a-z0-9_]+)'", ["sql"], ".sql")
    in_python = _names_read(r"thresholds\.get\(\"([a-z_]+)\"", ["tasks"], ".py")
    in_python |= _names_read(r"\"([a-z_]+)\"", ["tasks/validate"], "run.py") & set(THRESHOLDS)
    assert in_sql | in_python == set(THRESHOLDS)
    sql = "\n".join(p.read_text() for p in (ROOT / "sql").rglob("*.sql"))
    defaults = re.findall(r"coalesce\(\((?:given|manifest -> 'thresholds') ->> '([a-z0-9_]+)'\)::double, ([0-9.]+)\)", sql)
    assert defaults and all(THRESHOLDS[name] == float(value) for name, value in defaults)
