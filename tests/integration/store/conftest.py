"""Fixtures for the bundle-store tests: moto in server mode on 127.0.0.1, a bucket per test, bundles."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import boto3
import pytest

from tasks.store.base import StoreConfig
from tasks.store.factory import open_store
from tasks.store.s3 import S3Store

# Imported rather than listed in `pytest_plugins`: pytest refuses `pytest_plugins` in a conftest below the
# rootdir once it is configured, i.e. whenever the whole suite (`pytest tests`) runs.
from tests.integration.s3server import FaultProxy, s3_endpoint  # noqa: F401
from tests.integration.store.helpers import MiB


@pytest.fixture
def s3(s3_endpoint: str):  # noqa: F811 - the fixture imported above
    """A plain boto3 client straight to moto: the test's own view of the bucket, bypassing the store."""
    return boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")


@pytest.fixture
def bucket(s3) -> str:
    name = f"perf-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def proxy(s3_endpoint: str) -> Iterator[FaultProxy]:  # noqa: F811
    """A fault injector between the store and moto; forwards everything until told otherwise."""
    with FaultProxy(s3_endpoint) as running:
        yield running


@pytest.fixture
def make_store(bucket: str, proxy: FaultProxy) -> Callable[..., S3Store]:
    """An S3 store on the test bucket, reached through the proxy; multipart above 5 MiB, fast retries."""

    def make(**overrides) -> S3Store:
        settings = {
            "uri": f"s3://{bucket}/bundles",
            "endpoint_url": proxy.url,
            "multipart_threshold_bytes": 5 * MiB,
            "multipart_chunk_bytes": 5 * MiB,
            "request_attempts": 2,
            "file_attempts": 3,
            "backoff_s": 0.05,
            **overrides,
        }
        return open_store(StoreConfig(**settings))

    return make
