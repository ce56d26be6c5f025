"""A bundle store in S3 or any S3-compatible store (MinIO, Ceph RGW), through boto3.

Verification: after an upload every object is read back in full and its sha256 compared with the local
file's. S3's own checksums do not give that: an ETag is an MD5 only for single-part uploads (and not
under SSE-KMS), and with ChecksumAlgorithm=SHA256 a multipart object carries a checksum of its part
checksums ("...-4"), not the file's sha256; support also differs between S3-compatible servers.
Reading back costs one download of what was uploaded and works the same everywhere. Each object also
carries its sha256 in metadata (`x-amz-meta-sha256`): a repeated put compares it with a HEAD per file
instead of downloading. Metadata is only what the uploader claimed, so `verify()` reads content.

Retries: botocore's "standard" mode retries each HTTP request (throttling, 5xx, dropped connections)
with backoff; around it, a whole file is retried `file_attempts` times with a doubling pause. Access
denied, missing buckets and missing credentials are never retried.
"""

from __future__ import annotations

import hashlib
import logging
import mimetypes
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import TypeVar

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import (
    ClientError,
    FlexibleChecksumError,
    NoCredentialsError,
    PartialCredentialsError,
)

from tasks.bundle.files import file_sha256
from tasks.store.base import BundleStore, PutResult, StoreConfig
from tasks.store.bundle_files import (
    CHECKSUMS,
    BundleFile,
    BundleNotFound,
    StoreError,
    StoreUnavailable,
    VerificationError,
    check_run_id,
    format_checksums,
    is_run_id,
    parse_checksums,
    plan_put,
    prepare_bundle,
    publish_path,
)
from tasks.store.s3_client import (
    AWS_ERRORS,
    DENIED_CODES,
    cause_of,
    describe,
    error_code,
    http_status,
    is_transient,
    make_client,
)

log = logging.getLogger("perfcampaign.store")
T = TypeVar("T")
MiB = 1024 * 1024


class S3Store(BundleStore):
    """Bundles under `s3://bucket/prefix/<run_id>/`; the client is made on first use."""

    def __init__(self, config: StoreConfig) -> None:
        if config.scheme != "s3":
            raise StoreError(f"uri: {config.uri} is not an s3:// URI")
        self.config = config
        self.bucket = config.bucket
        self.prefix = config.prefix
        self.root_uri = f"s3://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")
        self._where = f" (endpoint {config.endpoint_url})" if config.endpoint_url else ""
        self._lock = threading.Lock()
        self._client_obj = None
        self._bucket_checked = False
        self._calls = self._http_attempts = self._file_retries = 0
        self._transfer = TransferConfig(
            multipart_threshold=config.multipart_threshold_bytes,
            multipart_chunksize=config.multipart_chunk_bytes,
            max_concurrency=config.max_concurrency,
            preferred_transfer_client="classic",
        )

    def __repr__(self) -> str:
        return f"S3Store({self.root_uri!r}, endpoint_url={self.config.endpoint_url!r})"

    @property
    def retries(self) -> int:
        """Retries so far: HTTP requests botocore repeated plus whole files this store repeated."""
        with self._lock:
            return self._http_attempts - self._calls + self._file_retries

    def _client(self):
        with self._lock:
            if self._client_obj is None:
                self._client_obj = make_client(self.config, self._count_call, self._count_attempt)
            return self._client_obj

    def _count_call(self, **_) -> None:
        with self._lock:
            self._calls += 1

    def _count_attempt(self, **_) -> None:
        with self._lock:
            self._http_attempts += 1

    def _key(self, run_id: str, relative: str = "") -> str:
        return "/".join(part for part in (self.prefix, check_run_id(run_id), relative) if part)

    def _uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def uri_for(self, run_id: str, relative: str = "") -> str:
        return self._uri(self._key(run_id, relative))

    # -- one object at a time, each with retries and a classified error ---------------------------------

    def _attempt(self, what: str, uri: str, action: Callable[[], T], notes: list[str] | None = None) -> T:
        started = time.monotonic()
        for attempt in range(1, self.config.file_attempts + 1):
            try:
                return action()
            except AWS_ERRORS as exc:
                cause = cause_of(exc)
                if not is_transient(cause):
                    raise self._error(what, uri, cause) from cause
                if attempt == self.config.file_attempts:
                    raise StoreUnavailable(
                        f"{uri}: {what} failed {attempt} times in {time.monotonic() - started:.1f} s{self._where}: "
                        f"{describe(cause)}"
                    ) from cause
                pause = self.config.backoff_s * 2 ** (attempt - 1)
                message = f"{uri}: {what} failed ({describe(cause)}), attempt {attempt}; retrying in {pause:.1f} s"
                log.warning(message)
                if notes is not None:
                    notes.append(message)
                with self._lock:
                    self._file_retries += 1
                time.sleep(pause)
        raise AssertionError("unreachable")

    def _error(self, what: str, uri: str, exc: Exception) -> StoreError:
        if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
            return StoreError(f"{uri}: {what}: no usable AWS credentials (environment, shared config, instance "
                              f"role, or credentials_block)")
        if isinstance(exc, ClientError):
            code, status = error_code(exc), http_status(exc)
            if code == "NoSuchBucket":
                return StoreError(f"{uri}: {what} failed: bucket {self.bucket!r} does not exist{self._where}")
            if status == 403 or code in DENIED_CODES:
                return StoreError(f"{uri}: {what} refused ({status} {code}){self._where}; check the credentials "
                                  f"and their permissions on bucket {self.bucket!r}")
        return StoreError(f"{uri}: {what} failed{self._where}: {describe(exc)}")

    def _ensure_bucket(self) -> None:
        """Fail early and clearly on a missing bucket (HEAD on a key cannot tell it from a missing key)."""
        if self._bucket_checked:
            return

        def action() -> None:
            try:
                self._client().head_bucket(Bucket=self.bucket)
            except ClientError as exc:
                if http_status(exc) == 404:
                    raise StoreError(f"s3://{self.bucket}: bucket does not exist{self._where}") from None
                if http_status(exc) != 403:  # a writer may lack s3:ListBucket: that is fine
                    raise

        self._attempt("HEAD bucket", f"s3://{self.bucket}", action)
        self._bucket_checked = True

    def _head(self, key: str) -> dict | None:
        def action() -> dict | None:
            try:
                return self._client().head_object(Bucket=self.bucket, Key=key)
            except ClientError as exc:
                if http_status(exc) == 404:
                    return None
                raise

        return self._attempt("HEAD", self._uri(key), action)

    def _hash_object(self, key: str) -> tuple[str, int] | None:
        """(sha256, size) of an object's content, read in full; None when it is absent."""

        def action() -> tuple[str, int] | None:
            try:
                body = self._client().get_object(Bucket=self.bucket, Key=key)["Body"]
            except ClientError as exc:
                if http_status(exc) == 404 and error_code(exc) != "NoSuchBucket":
                    return None
                raise
            digest, size = hashlib.sha256(), 0
            try:
                with closing(body):
                    for chunk in body.iter_chunks(MiB):
                        digest.update(chunk)
                        size += len(chunk)
            except FlexibleChecksumError:  # botocore checked the CRC the server stored with the object
                raise VerificationError(f"{self._uri(key)}: content does not match the checksum stored with it")
            return digest.hexdigest(), size

        return self._attempt("read back", self._uri(key), action)

    def _upload_verified(self, f: BundleFile, key: str, notes: list[str] | None) -> None:
        """Upload one file (multipart above the threshold), then read it back and compare."""
        started = time.perf_counter()
        extra = {"Metadata": {"sha256": f.sha256}, "ContentType": _content_type(f.relative)}
        self._attempt("upload", self._uri(key), lambda: self._client().upload_file(
            str(f.path), self.bucket, key, ExtraArgs=extra, Config=self._transfer), notes)
        head = self._head(key)
        stored = self._hash_object(key)
        if head is None or stored is None or head["ContentLength"] != f.size or stored != (f.sha256, f.size):
            got = f"sha256 {stored[0]}, {stored[1]} bytes" if stored else "nothing"
            raise VerificationError(f"{self._uri(key)}: read back after upload gives {got}; the local file "
                                    f"{f.path} has sha256 {f.sha256}, {f.size} bytes; {self._discard(key)}")
        log.info("%s: uploaded and verified %s bytes in %.2f s", self._uri(key), f"{f.size:,}",
                 time.perf_counter() - started)

    def _discard(self, key: str) -> str:
        """Delete an object that failed verification, so its sha256 metadata cannot vouch for it later."""
        try:
            self._client().delete_object(Bucket=self.bucket, Key=key)
            return "the bad object was deleted"
        except AWS_ERRORS as exc:
            return f"deleting the bad object failed ({describe(cause_of(exc))}): delete it or put with replace=True"

    def _stored_sha(self, key: str, f: BundleFile) -> str | None:
        head = self._head(key)
        if head is None:
            return None
        claimed = head.get("Metadata", {}).get("sha256")
        if head["ContentLength"] != f.size:
            return claimed if claimed and claimed != f.sha256 else f"size {head['ContentLength']}"
        if claimed:
            return claimed
        digest = self._hash_object(key)  # stored by someone else: read it to know
        return digest[0] if digest else None

    # -- the BundleStore operations -----------------------------------------------------------------

    def put_bundle(self, local_dir: Path, run_id: str, *, replace: bool = False) -> PutResult:
        started, retries_before = time.perf_counter(), self.retries
        root = Path(local_dir)
        files, checksums_text = prepare_bundle(root, run_id, replace=replace)
        result = PutResult(run_id, self.uri_for(run_id))
        try:
            self._ensure_bucket()
            stored_sums = self._stored_checksums(run_id)
            plan = plan_put(files, stored_sums, lambda f: self._stored_sha(self._key(run_id, f.relative), f),
                            replace, lambda relative: self.uri_for(run_id, relative))
            result.skipped = [f.relative for f in plan.skip]
            result.bytes_skipped = sum(f.size for f in plan.skip)
            checksums = BundleFile(CHECKSUMS, root / CHECKSUMS, file_sha256(root / CHECKSUMS), len(checksums_text))
            unchanged = stored_sums is not None and format_checksums(stored_sums) == checksums_text
            todo = plan.upload + plan.replace + ([] if unchanged else [checksums])  # SHA256SUMS last
            for f in todo:
                self._upload_verified(f, self._key(run_id, f.relative), result.notes)
                result.uploaded.append(f.relative)
                result.bytes_uploaded += f.size
            result.replaced = [f.relative for f in plan.replace]
            if unchanged:
                result.skipped.append(CHECKSUMS)
                result.bytes_skipped += checksums.size
        except (StoreUnavailable, VerificationError) as exc:
            raise type(exc)(
                f"{exc}\n{len(result.uploaded)} files were stored before this; the local bundle {root} is intact "
                f"(with its {CHECKSUMS}): put it again to finish, stored files are skipped"
            ) from exc.__cause__
        result.retries = self.retries - retries_before
        result.seconds = time.perf_counter() - started
        log.info("%s", result.summary())
        return result

    def get_bundle(self, run_id_or_uri: str, local_dir: Path) -> Path:
        self._ensure_bucket()
        return super().get_bundle(run_id_or_uri, local_dir)

    def list_runs(self) -> list[str]:
        self._ensure_bucket()
        base = f"{self.prefix}/" if self.prefix else ""

        def action() -> list[str]:
            names = []
            for page in self._client().get_paginator("list_objects_v2").paginate(
                    Bucket=self.bucket, Prefix=base, Delimiter="/"):
                names += [p["Prefix"][len(base):].rstrip("/") for p in page.get("CommonPrefixes", [])]
            return names

        candidates = [name for name in self._attempt("list", self.root_uri, action) if is_run_id(name)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            complete = list(pool.map(lambda name: self._head(self._key(name, CHECKSUMS)) is not None, candidates))
        return sorted(name for name, ok in zip(candidates, complete) if ok)

    def exists(self, run_id: str) -> bool:
        self._ensure_bucket()
        return self._head(self._key(run_id, CHECKSUMS)) is not None

    def put_file(self, run_id: str, relative: str, local_path: Path) -> str:
        relative = publish_path(relative, self._stored_checksums(check_run_id(run_id)))
        path, key = Path(local_path), self._key(run_id, relative)
        f = BundleFile(relative, path, file_sha256(path), path.stat().st_size)
        if self._stored_sha(key, f) != f.sha256:
            self._upload_verified(f, key, notes=None)
        return self._uri(key)

    def list_files(self, run_id: str) -> list[str]:
        self._ensure_bucket()
        base = self._key(run_id) + "/"

        def action() -> list[str]:
            keys = []
            for page in self._client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=base):
                keys += [item["Key"][len(base):] for item in page.get("Contents", [])]
            return sorted(keys)

        return self._attempt("list", self.uri_for(run_id), action)

    def delete_file(self, run_id: str, relative: str) -> None:
        key = self._key(run_id, publish_path(relative, self._stored_checksums(check_run_id(run_id))))
        self._attempt("DELETE", self._uri(key), lambda: self._client().delete_object(Bucket=self.bucket, Key=key))

    def _stored_checksums(self, run_id: str) -> dict[str, str] | None:
        key = self._key(run_id, CHECKSUMS)

        def action() -> bytes | None:
            try:
                return self._client().get_object(Bucket=self.bucket, Key=key)["Body"].read()
            except ClientError as exc:
                if http_status(exc) == 404 and error_code(exc) != "NoSuchBucket":
                    return None
                raise

        data = self._attempt("GET", self._uri(key), action)
        return None if data is None else parse_checksums(data.decode("utf-8", "replace"), self._uri(key))

    def _read_checksums(self, run_id: str) -> dict[str, str]:
        sums = self._stored_checksums(run_id)
        if sums is None:
            raise BundleNotFound(f"{self.uri_for(run_id)}: no stored bundle (no {CHECKSUMS}){self._where}")
        return sums

    def _fetch(self, run_id: str, relative: str, target: Path) -> None:
        key = self._key(run_id, relative)
        self._attempt("download", self._uri(key), lambda: self._client().download_file(
            self.bucket, key, str(target), Config=self._transfer))

    def _stored_digest(self, run_id: str, relative: str) -> tuple[str, int] | None:
        return self._hash_object(self._key(run_id, relative))


def _content_type(relative: str) -> str:
    kind, encoding = mimetypes.guess_type(relative)
    # A gzip file keeps application/octet-stream: a Content-Encoding would make clients unpack it.
    return kind if kind and not encoding else "application/octet-stream"
