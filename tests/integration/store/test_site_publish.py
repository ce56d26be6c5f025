"""The site published next to the bundles in S3 (moto on 127.0.0.1): pages under `<store>/site/` as text/html,
every link of a page resolving to a stored object (the bundle's run.yaml included), a second publish sending
nothing that did not change."""

from __future__ import annotations

import posixpath
import time
from pathlib import Path
from urllib.parse import unquote

from tasks.site.publish import build_and_publish
from tasks.store.base import StoreConfig
from tasks.store.factory import open_store
from tasks.warehouse.ingest import ingest_bundle
from tests.unit.site.tables import read_page

SAMPLE = Path(__file__).parents[2] / "data" / "samples" / "bundle-echo"


def test_the_site_is_published_beside_the_bundles_with_working_links(s3, bucket, s3_endpoint, tmp_path):
    config = StoreConfig(uri=f"s3://{bucket}/bundles", endpoint_url=s3_endpoint)
    store = open_store(config)
    store.put_bundle(SAMPLE, "sample-echo-1")
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(SAMPLE, warehouse, bundle_uri=store.uri_for("sample-echo-1"), progress=lambda message: None)
    result, home = build_and_publish(warehouse, tmp_path / "site", store_config=config)
    assert home == f"s3://{bucket}/bundles/site/index.html"
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="bundles/")["Contents"]}
    assert {f"bundles/site/{page}" for page in result.pages} <= keys
    hrefs = 0
    for page in result.pages:
        stored = s3.get_object(Bucket=bucket, Key=f"bundles/site/{page}")
        assert stored["ContentType"] == "text/html"
        for href in read_page(stored["Body"].read().decode()).hrefs:
            target = posixpath.normpath(posixpath.join("bundles/site", posixpath.dirname(page), unquote(href)))
            assert target in keys, f"{page}: {href}"
            hrefs += 1
    assert "bundles/sample-echo-1/run.yaml" in {
        posixpath.normpath(posixpath.join("bundles/site", unquote(h)))
        for h in read_page((tmp_path / "site" / "index.html").read_text()).hrefs}
    assert hrefs >= 3
    before = s3.head_object(Bucket=bucket, Key="bundles/site/index.html")["LastModified"]
    time.sleep(1.1)  # LastModified has whole seconds: an upload now would show
    again, _ = build_and_publish(warehouse, tmp_path / "site", store_config=config)
    assert again.written == []
    assert s3.head_object(Bucket=bucket, Key="bundles/site/index.html")["LastModified"] == before
