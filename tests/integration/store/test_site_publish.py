"""The site published next to the bundles in S3 (moto on 127.0.0.1): pages under `<store>/site/` as text/html,
every link of a page resolving to a stored object (the bundle's run.yaml included), a second publish sending
nothing that did not change; stored pages the site no longer has deleted, nothing else (in S3 and a folder)."""

from __future__ import annotations

import posixpath
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from tasks.site.publish import build_and_publish
from tasks.store.base import StoreConfig, StoreError
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


def _publish_over_stale_pages(config: StoreConfig, tmp_path: Path) -> tuple[object, list[str], list[str]]:
    """A store with the bundle, a published site's pages that this site no longer has (a campaign gone) and a
    file under site/ that is no page; the site published over it. Returns the build, the files of the bundle's
    folder before and after."""
    store = open_store(config)
    store.put_bundle(SAMPLE, "sample-echo-1")
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(SAMPLE, warehouse, bundle_uri=store.uri_for("sample-echo-1"), progress=lambda message: None)
    planted = tmp_path / "planted.html"
    planted.write_text("<p>an old page</p>")
    for page in ("campaigns/gone/index.html", "campaigns/gone/events/e1.html", "notes.txt"):
        store.put_file("site", page, planted)
    bundle_before = store.list_files("sample-echo-1")
    result, _ = build_and_publish(warehouse, tmp_path / "site", store_config=config)
    return result, bundle_before, store.list_files("sample-echo-1")


def test_pages_the_site_no_longer_has_are_deleted_from_the_bucket(s3, bucket, s3_endpoint, tmp_path):
    config = StoreConfig(uri=f"s3://{bucket}/bundles", endpoint_url=s3_endpoint)
    result, bundle_before, bundle_after = _publish_over_stale_pages(config, tmp_path)
    assert result.unpublished == ["campaigns/gone/events/e1.html", "campaigns/gone/index.html"]
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="bundles/site/")["Contents"]}
    assert keys == {f"bundles/site/{page}" for page in result.pages} | {"bundles/site/notes.txt"}
    assert bundle_after == bundle_before and "run.yaml" in bundle_after and "SHA256SUMS" in bundle_after
    store = open_store(config)
    for own in ("run.yaml", "SHA256SUMS", "app1/access.log"):  # a bundle's files are never deleted
        with pytest.raises(StoreError, match="is a file of the stored bundle"):
            store.delete_file("sample-echo-1", own)
    assert store.list_files("sample-echo-1") == bundle_before
    again, _ = build_and_publish(tmp_path / "w.duckdb", tmp_path / "site", store_config=config)
    assert again.unpublished == [] and again.written == []


def test_pages_the_site_no_longer_has_are_deleted_from_a_folder_store(tmp_path):
    config = StoreConfig(uri=str(tmp_path / "store"))
    result, bundle_before, bundle_after = _publish_over_stale_pages(config, tmp_path)
    assert result.unpublished == ["campaigns/gone/events/e1.html", "campaigns/gone/index.html"]
    site = tmp_path / "store" / "site"
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()) == sorted(
        [*result.pages, "notes.txt"])
    assert not (site / "campaigns" / "gone").exists()  # the folders it left empty went too
    assert bundle_after == bundle_before
    with pytest.raises(StoreError, match="is a file of the stored bundle"):
        open_store(config).delete_file("sample-echo-1", "app1/access.log")
