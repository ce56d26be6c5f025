"""Bundle store: perflog bundles kept forever in a local folder or an S3-compatible object store.

A stored bundle lives under `<root>/<run_id>/`: the bundle's files as they are, plus `SHA256SUMS`
(sha256sum format, relative paths, sorted), which `put_bundle` writes into the local bundle first and
stores last. A bundle is complete, listed and readable once its `SHA256SUMS` is stored. Raw logs are
immutable: storing a bundle again uploads only what is missing, and a stored file with different
content is an error unless `replace=True`. See docs/store.md.
"""

from __future__ import annotations

import re
import shutil
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

from pydantic import ConfigDict, Field, field_validator, model_validator

from tasks.bundle.files import file_sha256
from tasks.bundle.strict import StrictModel
from tasks.store.bundle_files import (
    CHECKSUMS,
    BundleConflict,
    BundleNotFound,
    StoreError,
    StoreUnavailable,
    VerificationError,
    check_run_id,
    format_checksums,
)

__all__ = [  # the errors of tasks/store/bundle_files.py are part of the store's interface
    "BundleConflict", "BundleNotFound", "BundleStore", "PutResult", "StoreConfig",
    "StoreError", "StoreUnavailable", "VerificationError", "VerifyReport",
]

MiB = 1024 * 1024
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_BLOCK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class StoreConfig(StrictModel):
    """Where bundles are kept: `file:///path` (or a plain path) or `s3://bucket/prefix` (+ endpoint_url)."""

    # Inputs never appear in validation errors: a URI pasted with a key in it must not be echoed back.
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    uri: str = "./perfcampaign-data"
    endpoint_url: str | None = None
    region: str | None = None
    credentials_block: str | None = None
    addressing_style: Literal["auto", "path", "virtual"] | None = None  # default: path with endpoint_url
    multipart_threshold_bytes: int = Field(8 * MiB, ge=MiB)
    multipart_chunk_bytes: int = Field(8 * MiB, ge=5 * MiB, le=5 * 1024 * MiB)  # S3: parts >= 5 MiB
    max_concurrency: int = Field(4, ge=1, le=64)
    request_attempts: int = Field(5, ge=1, le=20)  # per HTTP request, botocore "standard" retry mode
    file_attempts: int = Field(5, ge=1, le=20)  # per whole file, on top of the request retries
    backoff_s: float = Field(2.0, ge=0, le=300)  # first pause between whole-file attempts, then doubled
    bundle_attempts: int = Field(3, ge=1, le=20)  # whole-bundle uploads (Prefect task retries) on top of both
    bundle_retry_delay_s: float = Field(10.0, ge=0, le=3600)  # pause between whole-bundle uploads
    connect_timeout_s: float = Field(10, gt=0)
    read_timeout_s: float = Field(60, gt=0)
    transfer_checksums: Literal["when_supported", "when_required"] = "when_supported"

    @field_validator("uri")
    @classmethod
    def _check_uri(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("empty; use file:///path or s3://bucket/prefix")
        if "://" not in value and not value.startswith("file:"):
            return value  # a plain local path
        parts = urlsplit(value)
        scheme = parts.scheme.lower()
        if scheme not in ("file", "s3"):
            raise ValueError(f"scheme {scheme!r} is not supported; use file:///path or s3://bucket/prefix")
        # A secret key may hold '/', which ends the netloc early: in s3 URIs look for '@' and ':' anywhere.
        if "@" in parts.netloc or (scheme == "s3" and ("@" in value or ":" in parts.netloc)):
            raise ValueError("credentials do not belong in the store URI; use the AWS chain or credentials_block")
        if parts.query or parts.fragment:
            raise ValueError("a store URI has no query or fragment")
        if scheme == "file":
            if parts.netloc not in ("", "localhost") or not parts.path:
                raise ValueError("a file URI is file:///absolute/path")
            return value
        if not parts.netloc:
            raise ValueError("s3 URI needs a bucket: s3://bucket/prefix")
        if not _BUCKET.match(parts.netloc) or ".." in parts.netloc:
            raise ValueError(f"bucket {parts.netloc!r} is not a valid bucket name (3-63 of a-z 0-9 . -)")
        if any(seg in (".", "..") for seg in parts.path.split("/")):
            raise ValueError("the s3 prefix may not contain '.' or '..' segments")
        return value

    @field_validator("endpoint_url")
    @classmethod
    def _check_endpoint(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if "@" in value:
            raise ValueError("credentials do not belong in the endpoint URL; use the AWS chain or credentials_block")
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("expected http(s)://host[:port] of an S3-compatible endpoint")
        if parts.query or parts.fragment:
            raise ValueError("an endpoint URL has no query or fragment")
        return value.strip().rstrip("/")

    @field_validator("credentials_block")
    @classmethod
    def _check_block(cls, value: str | None) -> str | None:
        if value is not None and not _BLOCK_NAME.match(value):
            raise ValueError("a Prefect block name: lower-case letters, digits and dashes")
        return value

    @model_validator(mode="after")
    def _s3_only_options(self) -> StoreConfig:
        if self.scheme == "file":
            for name in ("endpoint_url", "region", "credentials_block", "addressing_style"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name}: only used with s3:// store URIs, the uri is a local folder")
        return self

    @property
    def scheme(self) -> Literal["file", "s3"]:
        return "s3" if self.uri.lower().startswith("s3://") else "file"

    @property
    def bucket(self) -> str:
        return urlsplit(self.uri).netloc

    @property
    def prefix(self) -> str:
        """The key prefix without leading or trailing slashes ('' for the bucket root)."""
        return "/".join(seg for seg in urlsplit(self.uri).path.split("/") if seg)

    @property
    def local_root(self) -> Path:
        if self.uri.startswith("file:"):
            return Path(unquote(urlsplit(self.uri).path)).expanduser().resolve()
        return Path(self.uri).expanduser().resolve()


@dataclass
class PutResult:
    """What `put_bundle` did: what was uploaded, what was already there, what had to be retried."""

    run_id: str
    uri: str
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    bytes_uploaded: int = 0
    bytes_skipped: int = 0
    retries: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (
            f"{self.uri}: {len(self.uploaded)} files uploaded ({self.bytes_uploaded:,} bytes), "
            f"{len(self.skipped)} already stored ({self.bytes_skipped:,} bytes), {self.retries} retries, "
            f"verified, {self.seconds:.1f} s"
        )
        return text + (f"; replaced: {', '.join(self.replaced)}" if self.replaced else "")


@dataclass
class VerifyReport:
    """A stored bundle whose every file was read back and matched its SHA256SUMS line."""

    run_id: str
    uri: str
    files: int
    bytes: int


class BundleStore(ABC):
    """Keeps bundles under `<root>/<run_id>/`; the same operations for a local folder and for S3."""

    root_uri: str

    @abstractmethod
    def uri_for(self, run_id: str, relative: str = "") -> str:
        """URI of a stored bundle, or of one file in it."""

    @abstractmethod
    def put_bundle(self, local_dir: Path, run_id: str, *, replace: bool = False) -> PutResult:
        """Store a local bundle: SHA256SUMS written first, only missing files sent, everything verified."""

    @abstractmethod
    def list_runs(self) -> list[str]:
        """Run ids of every complete bundle (its SHA256SUMS stored), sorted."""

    @abstractmethod
    def put_file(self, run_id: str, relative: str, local_path: Path) -> str:
        """Publish a file (a report) next to a bundle; bundle files themselves cannot be overwritten."""

    @abstractmethod
    def list_files(self, run_id: str) -> list[str]:
        """Relative paths of every file stored in the run's folder (a bundle's and published ones), sorted."""

    @abstractmethod
    def delete_file(self, run_id: str, relative: str) -> None:
        """Delete a published file (a site page no longer built); a bundle's own files are never deleted."""

    @abstractmethod
    def exists(self, run_id: str) -> bool:
        """True when the bundle is completely stored."""

    @abstractmethod
    def _read_checksums(self, run_id: str) -> dict[str, str]:
        """The stored SHA256SUMS as {relative: sha256}; BundleNotFound when there is none."""

    @abstractmethod
    def _fetch(self, run_id: str, relative: str, target: Path) -> None:
        """Copy one stored file to a local path."""

    @abstractmethod
    def _stored_digest(self, run_id: str, relative: str) -> tuple[str, int] | None:
        """(sha256, size) of a stored file computed from its content, None when it is absent."""

    def run_id_of(self, run_id_or_uri: str) -> str:
        """The run id of `run_id` or of a bundle URI inside this store."""
        value = str(run_id_or_uri).rstrip("/")
        if "://" in value or value.startswith("file:"):
            root = unquote(self.root_uri).rstrip("/") + "/"
            if not unquote(value).startswith(root) or "/" in unquote(value)[len(root):]:
                raise StoreError(f"{value}: not a bundle of the store {self.root_uri}")
            value = unquote(value)[len(root):]
        return check_run_id(value)

    def get_bundle(self, run_id_or_uri: str, local_dir: Path) -> Path:
        """Download a stored bundle to `local_dir/<run_id>/`, checked against SHA256SUMS (for re-ingest).

        An existing identical copy there is reused; a different one is an error, never overwritten.
        """
        run_id = self.run_id_of(run_id_or_uri)
        sums = self._read_checksums(run_id)
        target = Path(local_dir) / run_id
        if target.exists():
            _check_local_copy(target, sums, self.uri_for(run_id))
            return target
        Path(local_dir).mkdir(parents=True, exist_ok=True)
        incoming = Path(local_dir) / f".incoming~{run_id}~{uuid.uuid4().hex[:8]}"
        try:
            for relative, sha in sums.items():
                path = incoming / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                self._fetch(run_id, relative, path)
                if file_sha256(path) != sha:
                    raise VerificationError(f"{self.uri_for(run_id, relative)}: downloaded content does not match "
                                            f"its SHA256SUMS line")
            (incoming / CHECKSUMS).write_text(format_checksums(sums))
            incoming.rename(target)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
        return target

    def verify(self, run_id: str) -> VerifyReport:
        """Read every stored file of a bundle back and compare it with SHA256SUMS; raise on any difference."""
        run_id = self.run_id_of(run_id)
        sums = self._read_checksums(run_id)
        problems, total = [], 0
        for relative, sha in sums.items():
            try:
                digest = self._stored_digest(run_id, relative)
            except VerificationError as exc:
                problems.append(str(exc))
                continue
            if digest is None:
                problems.append(f"{self.uri_for(run_id, relative)}: missing")
            elif digest[0] != sha:
                problems.append(f"{self.uri_for(run_id, relative)}: sha256 {digest[0]} but SHA256SUMS says {sha}")
            else:
                total += digest[1]
        if problems:
            raise VerificationError(f"{self.uri_for(run_id)}: {len(problems)} of {len(sums)} files fail "
                                    f"verification:\n  " + "\n  ".join(problems))
        return VerifyReport(run_id, self.uri_for(run_id), len(sums), total)


def _check_local_copy(target: Path, sums: dict[str, str], uri: str) -> None:
    for relative, sha in sums.items():
        path = target / relative
        if not path.is_file() or file_sha256(path) != sha:
            raise StoreError(f"{target}: already exists and differs from {uri} ({relative}); "
                             f"remove it or download to another folder")
