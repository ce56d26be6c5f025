"""A bundle store in a local folder: `<root>/<run_id>/`, new bundles appearing whole (temp folder, rename)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

from tasks.bundle.files import file_sha256
from tasks.store.base import BundleStore, PutResult
from tasks.store.bundle_files import (
    CHECKSUMS,
    BundleFile,
    BundleNotFound,
    PutPlan,
    StoreError,
    VerificationError,
    check_run_id,
    is_run_id,
    parse_checksums,
    plan_put,
    prepare_bundle,
    publish_path,
    record_plan,
    write_atomic,
)

MiB = 1024 * 1024


class LocalStore(BundleStore):
    """Bundles as folders under a root folder; new bundles appear whole (temp folder, then rename)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        self.root_uri = self.root.as_uri()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def uri_for(self, run_id: str, relative: str = "") -> str:
        path = self.root / check_run_id(run_id)
        return (path / relative).as_uri() if relative else path.as_uri()

    def exists(self, run_id: str) -> bool:
        return (self.root / check_run_id(run_id) / CHECKSUMS).is_file()

    def list_runs(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / CHECKSUMS).is_file() and is_run_id(p.name))

    def put_bundle(self, local_dir: Path, run_id: str, *, replace: bool = False) -> PutResult:
        started = time.perf_counter()
        files, checksums_text = prepare_bundle(Path(local_dir), run_id, replace=replace)
        target = self.root / run_id
        result = PutResult(run_id, target.as_uri())
        try:
            if not target.exists() and self._put_new(files, checksums_text, target):
                result.uploaded = [f.relative for f in files] + [CHECKSUMS]
                result.bytes_uploaded = sum(f.size for f in files) + len(checksums_text.encode())
            else:
                self._merge(files, checksums_text, target, replace, result)
        except OSError as exc:
            raise StoreError(f"{target}: storing the bundle failed ({exc.strerror or exc}); "
                             f"the local bundle {local_dir} is intact") from exc
        result.seconds = time.perf_counter() - started
        return result

    def _put_new(self, files: list[BundleFile], checksums_text: str, target: Path) -> bool:
        """Copy into a temp folder and rename it into place; False when the target appeared meanwhile."""
        self.root.mkdir(parents=True, exist_ok=True)
        incoming = self.root / f".incoming~{target.name}~{uuid.uuid4().hex[:8]}"
        try:
            for f in files:
                _copy_verified(f, incoming / f.relative)
            write_atomic(incoming / CHECKSUMS, checksums_text.encode())
            try:
                incoming.rename(target)
            except OSError:
                if target.exists():
                    return False  # a concurrent put won: merge into it instead
                raise
            _fsync_dir(self.root)
            return True
        finally:
            shutil.rmtree(incoming, ignore_errors=True)

    def _merge(self, files: list[BundleFile], checksums_text: str, target: Path, replace: bool,
               result: PutResult) -> None:
        stored_sums = self._sums_or_none(target.name)

        def stored_sha(f: BundleFile) -> str | None:
            path = target / f.relative
            return file_sha256(path) if path.is_file() else None

        plan: PutPlan = plan_put(files, stored_sums, stored_sha, replace, lambda rel: str(target / rel))
        for f in plan.upload + plan.replace:
            _copy_verified(f, target / f.relative)
        record_plan(result, plan)
        checksums = target / CHECKSUMS
        if checksums.is_file() and checksums.read_text() == checksums_text:
            result.skipped.append(CHECKSUMS)
            result.bytes_skipped += len(checksums_text.encode())
        else:
            write_atomic(checksums, checksums_text.encode())
            result.uploaded.append(CHECKSUMS)
            result.bytes_uploaded += len(checksums_text.encode())

    def put_file(self, run_id: str, relative: str, local_path: Path) -> str:
        relative = publish_path(relative, self._sums_or_none(check_run_id(run_id)))
        target = self.root / run_id / relative
        sha = file_sha256(Path(local_path))
        if not (target.is_file() and file_sha256(target) == sha):
            _copy_verified(BundleFile(relative, Path(local_path), sha, Path(local_path).stat().st_size), target)
        return target.as_uri()

    def list_files(self, run_id: str) -> list[str]:
        folder = self.root / check_run_id(run_id)
        if not folder.is_dir():
            return []
        return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                      if p.is_file() and not p.name.startswith("."))  # not write_atomic's temp files

    def delete_file(self, run_id: str, relative: str) -> None:
        relative = publish_path(relative, self._sums_or_none(check_run_id(run_id)))
        folder = self.root / run_id
        target = folder / relative
        target.unlink(missing_ok=True)
        for parent in target.parents:  # folders it leaves empty go too (a removed campaign's events/)
            if parent == folder or any(parent.iterdir()):
                break
            parent.rmdir()

    def _sums_or_none(self, run_id: str) -> dict[str, str] | None:
        path = self.root / run_id / CHECKSUMS
        return parse_checksums(path.read_text(), str(path)) if path.is_file() else None

    def _read_checksums(self, run_id: str) -> dict[str, str]:
        sums = self._sums_or_none(run_id)
        if sums is None:
            raise BundleNotFound(f"{self.uri_for(run_id)}: no stored bundle (no {CHECKSUMS})")
        return sums

    def _fetch(self, run_id: str, relative: str, target: Path) -> None:
        shutil.copyfile(self.root / run_id / relative, target)

    def _stored_digest(self, run_id: str, relative: str) -> tuple[str, int] | None:
        path = self.root / run_id / relative
        return (file_sha256(path), path.stat().st_size) if path.is_file() else None


def _copy_verified(f: BundleFile, target: Path) -> None:
    """Copy to a temp file beside the target, fsync, read it back against the sha256, rename over the target."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.incoming~", dir=target.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(handle, "wb") as out, open(f.path, "rb") as src:
            shutil.copyfileobj(src, out, MiB)
            out.flush()
            os.fsync(out.fileno())
        if file_sha256(temp) != f.sha256:
            raise VerificationError(f"{target}: the copy of {f.path} does not match its sha256 "
                                    f"(did the file change while being stored?)")
        shutil.copystat(f.path, temp)
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

