"""From a store config to the store: the one place that knows both kinds of store."""

from __future__ import annotations

from tasks.store.base import BundleStore, StoreConfig
from tasks.store.local import LocalStore


def open_store(config: StoreConfig | None = None) -> BundleStore:
    """The store a config describes; S3 credentials are resolved on first use, not here."""
    config = config or StoreConfig()
    if config.scheme == "s3":
        from tasks.store.s3 import S3Store  # heavy: boto3 is imported for S3 stores only

        return S3Store(config)
    return LocalStore(config.local_root)
