"""Prefect flows load and run against a real (ephemeral, test-harness) Prefect server."""

from __future__ import annotations

import duckdb
import pytest
import yaml

from tests.bundles import write_bundle

pytestmark = pytest.mark.integration


def test_every_flow_module_loads():
    from flows.ingest import ingest_flow

    assert ingest_flow.name == "ingest"


def test_ingest_flow_loads_the_bundle_and_publishes_an_artifact(prefect_server, samples, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.ingest import ingest_flow

    manifest = yaml.safe_load((samples / "bundle-echo" / "run.yaml").read_text())
    sources = [s for s in manifest["sources"] if s["kind"] == "access_log"]
    bundle = write_bundle(
        tmp_path / "b", {s["path"]: samples / "bundle-echo" / s["path"] for s in sources}, sources,
        manifest["iterations"], manifest["requirements"], run_id="flow_run.1",
    )
    warehouse = tmp_path / "w.duckdb"
    assert ingest_flow(str(bundle), str(warehouse)) == "flow_run.1"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select count(*) from requests where run_id = 'flow_run.1'").fetchone()[0] == 4631 + 4630
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["ingest-flow-run-1"])))
    assert artifacts and "| server | 9,261 |" in artifacts[0].data
