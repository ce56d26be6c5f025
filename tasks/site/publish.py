"""Publish the site next to the bundles: `<store>/site/`, each page through the store's `put_file` (which skips a
page whose stored copy has the same digest, and gives S3 objects their content type), with links to reports and
bundles relative within the store; stored pages the site no longer has (events gone, a campaign's runs pages)
are deleted from `<store>/site/`, and nothing else in the store is."""

from __future__ import annotations

from pathlib import Path

from tasks.site.build import SiteResult, build_site
from tasks.store.base import StoreConfig
from tasks.store.factory import open_store
from tasks.warehouse.connection import Lake

SITE_FOLDER = "site"  # in the store, beside the run folders (a run id cannot be a bundle and the site at once)


def build_and_publish(warehouse: Path | Lake, out: Path, store_uri: str | None = None,
                      store_config: StoreConfig | None = None) -> tuple[SiteResult, str]:
    """Build into `out`; with a store, publish every page into it. Returns the build and the home page's
    path or URI."""
    config = store_config or (StoreConfig(uri=store_uri) if store_uri else None)
    if config is None:
        result = build_site(warehouse, out)
        return result, str(result.home.resolve())
    store = open_store(config)
    result = build_site(warehouse, out, store.uri_for(SITE_FOLDER))
    uris = {page: store.put_file(SITE_FOLDER, page, out / page) for page in result.pages}
    built = set(result.pages)
    result.unpublished = [page for page in store.list_files(SITE_FOLDER) if page.endswith(".html") and page not in built]
    for page in result.unpublished:
        store.delete_file(SITE_FOLDER, page)
    return result, uris["index.html"]
