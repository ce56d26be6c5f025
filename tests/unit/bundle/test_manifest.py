"""Bundle manifests: the issue's example loads as written; every bad manifest names its file and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tasks.bundle.manifest import ManifestError, PrefectRun, load_manifest
from tasks.bundle.writer import write_manifest

EXAMPLE = """\
format: 1
run_id: echo-2026-12-01
campaign: echo
scenario: ramp-vus
labels: {sut_version: '1.0.0'}
timezone: UTC
iterations:
  - {index: 1, start: '2026-12-01T02:00:00.000Z', end: '2026-12-01T02:15:00.000Z', load: {vus: 10}}
requirements:
  - {id: avg-under-250, metric: avg_ms, op: '<', threshold: 250, side: server, min_calls_per_s: 10}
  - {id: errors-under-1pct, metric: error_rate, op: '<', threshold: 0.01, side: client}
sources:
  - {kind: access_log, host: app1, path: app1/access.log, format: '%h %l %u %t "%r" %s %b %D', duration_unit: ms}
  - {kind: k6_json, host: loadgen, path: loadgen/k6-iter1.json.gz, iteration: 1}
  - {kind: k6_summary, host: loadgen, path: loadgen/k6-iter1-summary.json, iteration: 1}
"""


def _bundle(tmp_path: Path, text: str = EXAMPLE) -> Path:
    for name in ("app1/access.log", "loadgen/k6-iter1.json.gz", "loadgen/k6-iter1-summary.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "run.yaml").write_text(text)
    return tmp_path


def _edit(change) -> str:
    data = yaml.safe_load(EXAMPLE)
    change(data)
    return yaml.safe_dump(data)


def test_the_documented_example_loads_exactly(tmp_path):
    manifest = load_manifest(_bundle(tmp_path))
    assert manifest.run_id == "echo-2026-12-01"
    assert manifest.labels == {"sut_version": "1.0.0"}
    assert manifest.iterations[0].load == {"vus": 10}
    assert (manifest.iterations[0].end - manifest.iterations[0].start).total_seconds() == 900
    assert manifest.requirements[0].min_calls_per_s == 10
    assert manifest.sources[0].options == {"format": '%h %l %u %t "%r" %s %b %D', "duration_unit": "ms"}
    assert [s.iteration for s in manifest.sources] == [None, 1, 1]


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        (lambda d: d["sources"][0].update(path="../etc/passwd"), "sources.0.path", "inside the bundle"),
        (lambda d: d["sources"][0].update(path="/etc/passwd"), "sources.0.path", "inside the bundle"),
        (lambda d: d["sources"][0].update(kind="syslog"), "sources.0.kind", "unknown kind 'syslog'"),
        (lambda d: d["iterations"][0].update(end="2026-12-01T01:00:00Z"), "iterations.0", "is not after start"),
        (
            lambda d: d["iterations"].append({"index": 2, "start": "2026-12-01T02:10:00Z", "end": "2026-12-01T02:20:00Z"}),
            "(top level)",
            "iterations: 1 and 2 overlap",
        ),
        (lambda d: d["requirements"][0].update(metric="median"), "requirements.0.metric", "avg_ms"),
        (lambda d: d["requirements"][0].update(op="=="), "requirements.0.op", "'<'"),
        (lambda d: d.update(run_id="bad id!"), "run_id", "pattern"),
        (lambda d: d.update(timezone="Mars/Olympus"), "timezone", "unknown IANA time zone"),
        (lambda d: d.update(format=2), "format", "1"),
        (lambda d: d["sources"][1].update(iteration=7), "(top level)", "sources.1.iteration: 7"),
        (lambda d: d.update(prefect={"flow_run_id": "x", "flow_run_url": "javascript:alert(1)"}),
         "prefect.flow_run_url", "https?://"),
        (lambda d: d.update(prefect={"flow_run_url": "https://prefect.example/x"}), "prefect.flow_run_id", "required"),
        (lambda d: d.update(percentile_method="nearest"), "percentile_method", "'linear' or 'nearest_rank'"),
    ],
)
def test_bad_manifests_name_the_file_and_the_field(tmp_path, change, field, expected):
    bundle = _bundle(tmp_path, _edit(change))
    with pytest.raises(ManifestError) as error:
        load_manifest(bundle)
    message = str(error.value)
    assert str(bundle / "run.yaml") in message
    assert f"{field}:" in message
    assert expected in message


def test_the_prefect_flow_run_is_kept_through_write_and_load(tmp_path):
    """A campaign run under Prefect writes its flow run into run.yaml; one outside Prefect writes no `prefect`."""
    manifest = load_manifest(_bundle(tmp_path))
    assert "prefect" not in (write_manifest(tmp_path, manifest).read_text())
    linked = manifest.model_copy(update={"prefect": PrefectRun(flow_run_id="0d1e", flow_run_url="http://h:4200/r")})
    write_manifest(tmp_path, linked)
    assert yaml.safe_load((tmp_path / "run.yaml").read_text())["prefect"] == {"flow_run_id": "0d1e",
                                                                             "flow_run_url": "http://h:4200/r"}
    assert load_manifest(tmp_path).prefect == linked.prefect


def test_a_missing_file_is_named(tmp_path):
    bundle = _bundle(tmp_path)
    (bundle / "loadgen" / "k6-iter1.json.gz").unlink()
    with pytest.raises(ManifestError, match=r"sources\.1\.path 'loadgen/k6-iter1.json.gz': no such file"):
        load_manifest(bundle)


def test_a_symlink_out_of_the_bundle_is_refused(tmp_path):
    outside = tmp_path / "outside.log"
    outside.write_text("x")
    bundle = _bundle(tmp_path / "b")
    (bundle / "app1" / "access.log").unlink()
    (bundle / "app1" / "access.log").symlink_to(outside)
    with pytest.raises(ManifestError, match="leaves the bundle"):
        load_manifest(bundle)


def test_no_manifest(tmp_path):
    with pytest.raises(ManifestError, match="no manifest"):
        load_manifest(tmp_path)
