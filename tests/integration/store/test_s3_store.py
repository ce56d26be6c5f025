"""The S3 bundle store against moto in server mode over HTTP, with a fault injector in between.

Expected values are computed here with hashlib/md5 over the files, never taken from the store.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tasks.store.base import (
    BundleConflict,
    StoreConfig,
    StoreError,
    StoreUnavailable,
    VerificationError,
)
from tasks.store.factory import open_store
from tests.integration.s3server import free_port
from tests.integration.store.helpers import MiB, write_store_bundle

pytestmark = pytest.mark.integration


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, str]:
    """{relative path: sha256} of every file under root, computed independently of the store."""
    return {p.relative_to(root).as_posix(): sha256(p) for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def big_bundle(tmp_path: Path) -> Path:
    return write_store_bundle(tmp_path / "bundle", "s3-big-run", big_mib=20)


def test_bundle_stored_multipart_listed_verified_and_read_back_identical(big_bundle, make_store, s3, bucket, tmp_path):
    originals = tree(big_bundle)
    store = make_store()

    result = store.put_bundle(big_bundle, "s3-big-run")

    files = sorted([*originals, "SHA256SUMS"])
    sums_text = (big_bundle / "SHA256SUMS").read_text()
    assert sorted(result.uploaded) == files and result.skipped == []
    assert result.bytes_uploaded == sum((big_bundle / f).stat().st_size for f in originals) + len(sums_text)
    assert sums_text == "".join(f"{originals[f]}  {f}\n" for f in sorted(originals))  # sha256sum format
    heap = s3.head_object(Bucket=bucket, Key="bundles/s3-big-run/app1/heap.bin")
    assert heap["ContentLength"] == 20 * MiB
    assert heap["ETag"].strip('"').endswith("-4")  # 20 MiB in 5 MiB parts: a multipart upload
    assert heap["Metadata"]["sha256"] == originals["app1/heap.bin"]
    log = s3.head_object(Bucket=bucket, Key="bundles/s3-big-run/app1/access.log")
    assert log["ETag"].strip('"') == hashlib.md5((big_bundle / "app1/access.log").read_bytes()).hexdigest()

    assert store.list_runs() == ["s3-big-run"] and store.exists("s3-big-run") and not store.exists("other")
    report = store.verify("s3-big-run")
    assert (report.files, report.bytes) == (len(originals), sum((big_bundle / f).stat().st_size for f in originals))

    copy = store.get_bundle(f"s3://{bucket}/bundles/s3-big-run", tmp_path / "downloads")
    assert copy == tmp_path / "downloads" / "s3-big-run"
    assert tree(copy) == {**originals, "SHA256SUMS": sha256(big_bundle / "SHA256SUMS")}
    if shutil.which("sha256sum"):
        subprocess.run(["sha256sum", "--check", "--quiet", "SHA256SUMS"], cwd=copy, check=True)
    assert store.get_bundle("s3-big-run", tmp_path / "downloads") == copy  # an identical copy is reused


def test_second_put_sends_no_bytes(big_bundle, make_store, proxy):
    store = make_store()
    first = store.put_bundle(big_bundle, "s3-big-run")
    proxy.reset_counts()

    again = store.put_bundle(big_bundle, "s3-big-run")

    assert (again.uploaded, again.bytes_uploaded) == ([], 0)
    assert sorted(again.skipped) == sorted(first.uploaded) and again.bytes_skipped == first.bytes_uploaded
    assert proxy.puts_seen == 0  # nothing at all was sent to the store


def test_corrupted_object_is_detected(big_bundle, make_store, s3, bucket):
    store = make_store()
    store.put_bundle(big_bundle, "s3-big-run")
    key = "bundles/s3-big-run/app1/heap.bin"
    good = (big_bundle / "app1" / "heap.bin").read_bytes()
    flipped = good[:1000] + bytes([good[1000] ^ 0xFF]) + good[1001:]
    # Worst case: same size and the original's sha256 forged into the metadata.
    s3.put_object(Bucket=bucket, Key=key, Body=flipped, Metadata={"sha256": hashlib.sha256(good).hexdigest()})

    with pytest.raises(VerificationError) as caught:
        store.verify("s3-big-run")
    assert f"s3://{bucket}/{key}: sha256 {hashlib.sha256(flipped).hexdigest()}" in str(caught.value)

    s3.put_object(Bucket=bucket, Key=key, Body=flipped)  # a plain overwrite: no sha256 metadata
    with pytest.raises(BundleConflict, match=f"s3://{bucket}/{key}: stored content differs"):
        store.put_bundle(big_bundle, "s3-big-run")

    repaired = store.put_bundle(big_bundle, "s3-big-run", replace=True)
    assert repaired.replaced == ["app1/heap.bin"] and repaired.uploaded == ["app1/heap.bin"]
    assert store.verify("s3-big-run").files == 4


def test_store_refusing_uploads_for_a_while_is_retried(tmp_path, make_store, proxy):
    bundle = write_store_bundle(tmp_path / "bundle", "refused-run")
    store = make_store()
    store.exists("refused-run")  # bucket check done; from here on the store refuses the next 3 PUTs
    proxy.refuse_puts(3)

    result = store.put_bundle(bundle, "refused-run")

    assert proxy.refused == 3
    # 2 HTTP attempts per call (botocore), so: refused, refused -> whole-file retry -> refused, accepted.
    assert result.retries == 3
    assert len(result.notes) == 1 and "503 SlowDown" in result.notes[0] and "retrying" in result.notes[0]
    assert store.verify("refused-run").files == 3


def test_store_that_stays_down_fails_clearly_and_the_local_bundle_stays_intact(tmp_path, make_store, proxy, bucket):
    bundle = write_store_bundle(tmp_path / "bundle", "down-run")
    before = tree(bundle)
    run_yaml = (bundle / "run.yaml").read_bytes()
    store = make_store(request_attempts=1)  # whole-file retries only: botocore's own backoff is random
    store.exists("down-run")
    proxy.down(True)

    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        store.put_bundle(bundle, "down-run")
    elapsed = time.monotonic() - started

    message = str(caught.value)
    assert f"s3://{bucket}/bundles/down-run/" in message and "503 SlowDown" in message
    assert "failed 3 times" in message and f"the local bundle {bundle} is intact" in message
    assert elapsed < 5  # 3 attempts, 0.05 s then 0.1 s apart
    after = tree(bundle)
    assert (bundle / "run.yaml").read_bytes() == run_yaml
    assert {k: v for k, v in after.items() if k != "SHA256SUMS"} == before  # only SHA256SUMS was added

    proxy.down(False)
    assert store.put_bundle(bundle, "down-run").bytes_uploaded > 0  # put again once the store is back
    assert store.verify("down-run").files == 3


def test_unreachable_endpoint_names_it(tmp_path, bucket):
    endpoint = f"http://127.0.0.1:{free_port()}"
    store = open_store(StoreConfig(uri=f"s3://{bucket}", endpoint_url=endpoint, request_attempts=1,
                                   file_attempts=2, backoff_s=0.05))
    with pytest.raises(StoreUnavailable, match=f"s3://{bucket}: HEAD bucket failed 2 times .*endpoint {endpoint}"):
        store.put_bundle(write_store_bundle(tmp_path / "bundle", "unreachable"), "unreachable")


def test_access_denied_and_missing_bucket_are_not_retried(tmp_path, make_store, proxy):
    bundle = write_store_bundle(tmp_path / "bundle", "denied-run")
    store = make_store()
    store.exists("denied-run")
    proxy.refuse_puts(100, status=403)
    with pytest.raises(StoreError, match=r"denied-run/app1/access.log: upload refused \(403 AccessDenied\)"):
        store.put_bundle(bundle, "denied-run")
    assert proxy.refused == 1

    missing = make_store(uri="s3://no-such-bucket-here/x")
    with pytest.raises(StoreError, match="s3://no-such-bucket-here: bucket does not exist"):
        missing.put_bundle(bundle, "denied-run")


def test_report_published_next_to_the_bundle(tmp_path, make_store, s3, bucket):
    bundle = write_store_bundle(tmp_path / "bundle", "report-run")
    store = make_store()
    store.put_bundle(bundle, "report-run")
    report = tmp_path / "report.html"
    report.write_text("<h1>report</h1>")

    uri = store.put_file("report-run", "report/index.html", report)

    assert uri == f"s3://{bucket}/bundles/report-run/report/index.html"
    stored = s3.get_object(Bucket=bucket, Key="bundles/report-run/report/index.html")
    assert stored["Body"].read() == report.read_bytes() and stored["ContentType"] == "text/html"
    with pytest.raises(StoreError, match="app1/access.log: is a file of the stored bundle"):
        store.put_file("report-run", "app1/access.log", report)
    assert store.list_runs() == ["report-run"] and store.verify("report-run").files == 3


def test_credentials_from_the_environment_never_leak(tmp_path, make_store, proxy, monkeypatch, caplog):
    key_id, secret = "AKIAPERFCAMPAIGN0042", "perfcampaign/Secret+Key/never-in-logs-0042"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    caplog.set_level(logging.DEBUG)
    bundle = write_store_bundle(tmp_path / "bundle", "creds-run")
    store = make_store(request_attempts=1)

    seen = [repr(store.config), str(store.config), store.config.model_dump_json(), repr(store)]
    seen.append(store.put_bundle(bundle, "creds-run").summary())  # the environment's credentials work
    proxy.down(True)
    for action in (lambda: store.put_bundle(bundle, "creds-run", replace=True),
                   lambda: make_store(uri="s3://no-such-bucket-here", request_attempts=1).exists("creds-run")):
        with pytest.raises(StoreError) as caught:
            action()
        error: BaseException | None = caught.value
        while error is not None:
            seen += [str(error), repr(error)]
            error = error.__cause__ or error.__context__
    proxy.down(False)

    assert len(caplog.records) > 50  # botocore's DEBUG wire log was captured too
    for text in seen + [caplog.text]:
        assert secret not in text
        assert key_id not in text


def test_credentials_from_a_prefect_secret_block(prefect_server, tmp_path, make_store, monkeypatch, caplog):
    from prefect.blocks.system import Secret

    key_id, secret = "AKIAPERFCAMPAIGNBLK1", "perfcampaign/Block+Secret/never-in-logs-0007"
    Secret(value={"aws_access_key_id": key_id, "aws_secret_access_key": secret}).save("perf-s3-test", overwrite=True)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no probing for an instance role
    caplog.set_level(logging.DEBUG)
    bundle = write_store_bundle(tmp_path / "bundle", "block-run")

    with pytest.raises(StoreError, match="no usable AWS credentials"):  # nothing in the chain: not retried
        make_store().put_bundle(bundle, "block-run")
    with pytest.raises(StoreError, match="credentials_block 'no-such-block': no Prefect Secret"):
        make_store(credentials_block="no-such-block").put_bundle(bundle, "block-run")
    store = make_store(credentials_block="perf-s3-test")
    result = store.put_bundle(bundle, "block-run")

    assert result.bytes_uploaded > 0 and store.verify("block-run").files == 3
    for text in (repr(store.config), repr(store), result.summary(), caplog.text):
        assert secret not in text and key_id not in text
