"""A campaign whose store (S3 over HTTP: moto behind a fault proxy) refuses uploads for a while, or stays
down: nothing collected is lost and the run says what happened."""

from __future__ import annotations

import uuid

import boto3
import duckdb
import pytest
import yaml

from tests.echo_stage import free_ports
from tests.integration.conftest import campaign_copy
from tests.integration.s3server import FaultProxy, s3_endpoint  # noqa: F401  (the session fixture)

pytestmark = pytest.mark.integration


@pytest.fixture
def bucket(s3_endpoint):  # noqa: F811
    name = f"runs-{uuid.uuid4().hex[:10]}"
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=name)
    return name


def _run(tmp_path, endpoint: str, bucket: str):
    from flows.campaign import RunOverrides, campaign_flow

    ports = free_ports(2)
    store = {"uri": f"s3://{bucket}/bundles", "endpoint_url": endpoint, "region": "us-east-1",
             "request_attempts": 2, "file_attempts": 3, "backoff_s": 0.2,
             "bundle_attempts": 3, "bundle_retry_delay_s": 1}
    extra = {"vars.port_app1": str(ports[0]), "vars.port_app2": str(ports[1])}
    campaign = campaign_copy(tmp_path, {"workdir": str(tmp_path / "stage"), "store": store})
    overrides = RunOverrides(duration_s=2, pause_s=0, max_steps=1, extra=extra)
    return campaign_flow(str(campaign), overrides, str(tmp_path / "w.duckdb"), str(tmp_path / "work"))


def _stored_keys(endpoint, bucket) -> set[str]:
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    return {o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])}


def test_a_store_refusing_uploads_for_a_while(prefect_server, s3_endpoint, bucket, tmp_path):  # noqa: F811
    with FaultProxy(s3_endpoint) as proxy:
        proxy.refuse_puts(3)
        run_id = _run(tmp_path, proxy.url, bucket)
        assert proxy.refused == 3
    (local,) = (tmp_path / "work" / "runs").iterdir()
    files = {str(p.relative_to(local)) for p in local.rglob("*") if p.is_file()}
    bundle_keys = {k for k in _stored_keys(s3_endpoint, bucket) if f"bundles/{run_id}/report/" not in k}
    assert {f"bundles/{run_id}/{f}" for f in files} == bundle_keys  # the report is published beside it
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        assert con.execute("select bundle_uri from runs").fetchone() == (f"s3://{bucket}/bundles/{run_id}",)


def test_a_store_that_stays_down_keeps_the_bundle_locally(prefect_server, s3_endpoint, bucket, tmp_path):  # noqa: F811
    from tasks.store.base import StoreUnavailable

    with FaultProxy(s3_endpoint) as proxy:
        proxy.down(True)
        with pytest.raises(StoreUnavailable):
            _run(tmp_path, proxy.url, bucket)
    (local,) = (tmp_path / "work" / "runs").iterdir()
    manifest = yaml.safe_load((local / "run.yaml").read_text())
    assert manifest["status"] == "completed" and len(manifest["iterations"]) == 1
    assert all((local / source["path"]).stat().st_size > 0 for source in manifest["sources"])
    assert not any(key.endswith("SHA256SUMS") for key in _stored_keys(s3_endpoint, bucket))
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:  # loaded from the local copy
        assert con.execute("select bundle_uri from runs").fetchone()[0] == local.resolve().as_uri()
