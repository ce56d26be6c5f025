"""The local side of storing a bundle: check the folder, write its SHA256SUMS, decide what to send.

Plain functions shared by every store, plus the store errors. `SHA256SUMS` is in `sha256sum` format
(`<hex>  <relative path>`, sorted by path, every file of the bundle but itself), so
`sha256sum -c SHA256SUMS` checks a bundle with no perfcampaign installed.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tasks.bundle.files import file_sha256
from tasks.bundle.yaml_limits import load_yaml

CHECKSUMS = "SHA256SUMS"
MANIFEST = "run.yaml"
_RUN_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")


class StoreError(RuntimeError):
    """A store operation failed; the message names the path or bucket/key and what went wrong."""


class StoreUnavailable(StoreError):
    """The store kept refusing or dropping requests after every retry; the local bundle is intact."""


class BundleConflict(StoreError):
    """The store holds different content for a file of the bundle (raw logs are immutable)."""


class BundleNotFound(StoreError):
    """No complete bundle (no SHA256SUMS) is stored for that run."""


class VerificationError(StoreError):
    """A stored or copied file does not match its sha256."""


@dataclass(frozen=True)
class BundleFile:
    relative: str  # posix path inside the bundle
    path: Path  # the local file
    sha256: str
    size: int


@dataclass
class PutPlan:
    upload: list[BundleFile] = field(default_factory=list)  # not stored yet
    replace: list[BundleFile] = field(default_factory=list)  # stored with other content, replace=True
    skip: list[BundleFile] = field(default_factory=list)  # stored with the same sha256


def check_run_id(run_id: str) -> str:
    """The run id itself when it is a valid one (as in run.yaml, and not '.' or '..')."""
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id) or run_id in (".", ".."):
        raise StoreError(f"run id {run_id!r}: expected 1-128 of A-Z a-z 0-9 . _ -")
    return run_id


def is_run_id(name: str) -> bool:
    return bool(_RUN_ID.match(name)) and name not in (".", "..")


def format_checksums(sums: dict[str, str]) -> str:
    return "".join(f"{sums[relative]}  {relative}\n" for relative in sorted(sums))


def parse_checksums(text: str, where: str) -> dict[str, str]:
    """{relative path: sha256} from SHA256SUMS text; `where` names the file in errors."""
    sums = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _LINE.match(line)
        if not match:
            raise StoreError(f"{where}: line {number} is not '<sha256>  <path>'")
        relative = match.group(2)
        if relative.startswith("/") or any(seg in ("", ".", "..") for seg in relative.split("/")):
            raise StoreError(f"{where}: line {number}: {relative!r} is not a relative path inside the bundle")
        sums[relative] = match.group(1)
    return sums


def _is_utf8(name: str) -> bool:
    """False for a name os.walk decoded with surrogate escapes (bytes that are not UTF-8, e.g. Latin-1)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scan_bundle(root: Path) -> list[tuple[str, Path]]:
    """(relative posix path, local path) of every file of a bundle folder but SHA256SUMS, sorted.

    Links are followed when they stay inside the bundle (the file's content is stored) and refused
    otherwise, as the bundle format refuses paths leaving the bundle.
    """
    if not root.is_dir():
        raise StoreError(f"{root}: no such bundle folder")
    if not (root / MANIFEST).is_file():
        raise StoreError(f"{root}: not a bundle (no {MANIFEST})")
    real_root = root.resolve()
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            if (Path(dirpath) / name).is_symlink():
                raise StoreError(f"{Path(dirpath) / name}: links to folders are not stored; copy the files in")
        for name in filenames:
            path = Path(dirpath) / name
            relative = path.relative_to(root).as_posix()
            if relative == CHECKSUMS or (Path(dirpath) == root and name.startswith(f".{CHECKSUMS}.")):
                continue
            if not _is_utf8(relative):
                raise StoreError(f"{str(root)!r}: file name {relative!r} is not UTF-8 (written in another "
                                 "encoding?): rename it, a stored bundle's names are UTF-8")
            if any(char in relative for char in "\\\n\r"):
                raise StoreError(f"{path}: file names with backslashes or line breaks are not stored")
            if path.is_symlink() and not path.resolve().is_relative_to(real_root):
                raise StoreError(f"{path}: links to a file outside the bundle")
            if not path.is_file():
                raise StoreError(f"{path}: not a regular file")
            found.append((relative, path))
    return sorted(found)


def _check_manifest_run_id(root: Path, run_id: str) -> None:
    try:
        manifest = load_yaml((root / MANIFEST).read_text())  # bounded: a hostile run.yaml is refused, not expanded
    except (OSError, UnicodeError, yaml.YAMLError) as exc:
        raise StoreError(f"{root / MANIFEST}: cannot be read ({exc.__class__.__name__})") from exc
    if not isinstance(manifest, dict) or str(manifest.get("run_id")) != run_id:
        found = manifest.get("run_id") if isinstance(manifest, dict) else None
        raise StoreError(f"{root / MANIFEST}: run_id is {found!r}, the bundle is being stored as {run_id!r}")


def prepare_bundle(root: Path, run_id: str, *, replace: bool = False) -> tuple[list[BundleFile], str]:
    """Hash every file of a local bundle and write its SHA256SUMS; return the files and that text.

    An existing SHA256SUMS that disagrees with the files (a file changed or vanished since it was
    written) is an error unless `replace`: raw logs are immutable. Files added since are fine.
    run.yaml is read (its run_id must match) but never modified.
    """
    check_run_id(run_id)
    found = scan_bundle(root)
    _check_manifest_run_id(root, run_id)
    files = [BundleFile(rel, path, file_sha256(path), path.stat().st_size) for rel, path in found]
    sums = {f.relative: f.sha256 for f in files}
    text = format_checksums(sums)
    existing = root / CHECKSUMS
    if existing.is_file():
        old_text = existing.read_text()
        if old_text == text:
            return files, text
        old = parse_checksums(old_text, str(existing))
        changed = [rel for rel, sha in old.items() if sums.get(rel) != sha]
        if changed and not replace:
            raise BundleConflict(
                f"{root}: files changed or vanished since its {CHECKSUMS} was written: {', '.join(changed)}; "
                f"raw logs are immutable (pass replace=True to store the bundle as it is now)"
            )
    write_atomic(existing, text.encode())
    return files, text


def plan_put(
    files: list[BundleFile],
    stored_sums: dict[str, str] | None,
    stored_sha: Callable[[BundleFile], str | None],
    replace: bool,
    where: Callable[[str], str],
) -> PutPlan:
    """Sort files into upload / replace / skip by the sha256 of what is stored (None: absent).

    Without `replace`, a stored file with other content, or one the stored SHA256SUMS lists and the
    local bundle lacks, raises BundleConflict naming every such file, before anything is written.
    """
    plan, conflicts = PutPlan(), []
    for f in files:
        sha = stored_sha(f)
        if sha is None:
            plan.upload.append(f)
        elif sha == f.sha256:
            plan.skip.append(f)
        elif replace:
            plan.replace.append(f)
        else:
            conflicts.append(f"{where(f.relative)}: stored content differs from the local file")
    local = {f.relative for f in files}
    for relative in sorted(set(stored_sums or {}) - local):
        if not replace:
            conflicts.append(f"{where(relative)}: in the stored bundle but not in the local one")
    if conflicts:
        raise BundleConflict(
            "the stored bundle differs; raw logs are immutable (replace=True overwrites):\n  " + "\n  ".join(conflicts)
        )
    return plan


def record_plan(result, plan: PutPlan) -> None:
    result.uploaded += [f.relative for f in plan.upload + plan.replace]
    result.replaced += [f.relative for f in plan.replace]
    result.skipped += [f.relative for f in plan.skip]
    result.bytes_uploaded += sum(f.size for f in plan.upload + plan.replace)
    result.bytes_skipped += sum(f.size for f in plan.skip)


def publish_path(relative: str, stored_sums: dict[str, str] | None) -> str:
    """A safe relative path for a published file that is not one of the bundle's own files."""
    parts = [seg for seg in str(relative).replace("\\", "/").split("/") if seg]
    if not parts or str(relative).startswith("/") or any(seg in (".", "..") for seg in parts):
        raise StoreError(f"{relative!r}: a published file needs a relative path inside the run folder")
    relative = "/".join(parts)
    if relative in (CHECKSUMS, MANIFEST) or relative in (stored_sums or {}):
        raise StoreError(f"{relative}: is a file of the stored bundle; raw logs are never overwritten")
    return relative


def write_atomic(target: Path, data: bytes) -> None:
    """Write a file whole or not at all: temp file beside it, fsync, rename."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, target)
    finally:
        Path(temp).unlink(missing_ok=True)
