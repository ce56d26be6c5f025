"""The local bundle store, the store config and the SHA256SUMS manifest, on real folders."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from tasks.store.base import (
    BundleConflict,
    BundleNotFound,
    StoreConfig,
    StoreError,
)
from tasks.store.factory import open_store
from tasks.store.local import LocalStore
from tasks.store.s3_client import credentials_from_secret


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): sha256(p) for p in sorted(root.rglob("*")) if p.is_file()}


def make_bundle(root: Path, run_id: str = "local-run", big_bytes: int = 200_000) -> Path:
    (root / "app1").mkdir(parents=True)
    (root / "run.yaml").write_text(f"format: 1\nrun_id: {run_id}\ncampaign: unit\n")
    (root / "app1" / "access.log").write_text("".join(f"line {i}\n" for i in range(5000)))
    (root / "app1" / "vmstat.log").write_bytes(bytes(range(256)) * (big_bytes // 256))
    return root


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return make_bundle(tmp_path / "bundle")


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "store")


# -- config -------------------------------------------------------------------------------------------

def test_config_defaults_to_a_local_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = StoreConfig()
    assert config.scheme == "file" and config.local_root == tmp_path / "perfcampaign-data"
    assert open_store(config).root == tmp_path / "perfcampaign-data"
    assert StoreConfig(uri=f"file://{tmp_path}/a%20b").local_root == tmp_path / "a b"


def test_config_s3_parts():
    config = StoreConfig(uri="s3://perf-bundles/team/runs/", endpoint_url="http://127.0.0.1:9000/")
    assert (config.scheme, config.bucket, config.prefix) == ("s3", "perf-bundles", "team/runs")
    assert config.endpoint_url == "http://127.0.0.1:9000"


@pytest.mark.parametrize(
    ("settings", "field", "expected"),
    [
        ({"uri": "http://example.com/x"}, "uri", "scheme 'http' is not supported"),
        ({"uri": "s3://"}, "uri", "s3 URI needs a bucket"),
        ({"uri": "s3://Bad_Bucket"}, "uri", "not a valid bucket name"),
        ({"uri": "s3://perf-bundles/a/../b"}, "uri", "'.' or '..'"),
        ({"uri": "s3://perf-bundles", "endpoint_url": "ftp://host"}, "endpoint_url", "http(s)://host"),
        ({"uri": "/tmp/x", "region": "eu-west-1"}, "region", "only used with s3://"),
        ({"uri": "s3://perf-bundles", "credentials_block": "Not A Name"}, "credentials_block", "Prefect block"),
        ({"uri": "s3://perf-bundles", "multipart_chunk_bytes": 1024}, "multipart_chunk_bytes", "greater than"),
        ({"uri": "s3://perf-bundles", "password": "x"}, "password", "unknown key"),
    ],
)
def test_config_errors_name_the_field(settings, field, expected):
    with pytest.raises(ValidationError) as caught:
        StoreConfig(**settings)
    assert field in str(caught.value) and expected in str(caught.value)


def test_credentials_in_uris_are_refused_and_never_echoed():
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    for settings in ({"uri": f"s3://AKIAEXAMPLE:{secret}@perf-bundles/x"},
                     {"uri": "s3://perf-bundles", "endpoint_url": f"http://AKIAEXAMPLE:{secret}@minio:9000"}):
        with pytest.raises(ValidationError) as caught:
            StoreConfig(**settings)
        assert "credentials do not belong" in str(caught.value)
        assert secret not in str(caught.value) and "AKIAEXAMPLE" not in str(caught.value)
        # pydantic keeps the raw input in .errors() whatever the config: callers print include_input=False.
        assert secret not in repr(caught.value.errors(include_input=False))


def test_secret_block_value_parsing_never_echoes_the_value():
    value = {"aws_access_key_id": "AKIAEXAMPLE", "aws_secret_access_key": "s3cr3t-value"}
    assert credentials_from_secret(json.dumps(value), "perf-s3") == value
    assert credentials_from_secret({**value, "aws_session_token": "tok"}, "perf-s3")["aws_session_token"] == "tok"
    for bad in ('{"aws_access_key_id": "AKIAEXAMPLE"}', "s3cr3t-value", {"aws_secret_access_key": "s3cr3t-value"}):
        with pytest.raises(StoreError, match="credentials_block 'perf-s3': the Secret must hold JSON") as caught:
            credentials_from_secret(bad, "perf-s3")
        assert "s3cr3t-value" not in str(caught.value) and "AKIAEXAMPLE" not in str(caught.value)


# -- local store --------------------------------------------------------------------------------------

def test_put_list_verify_and_read_back(bundle, store, tmp_path):
    originals = tree(bundle)
    result = store.put_bundle(bundle, "local-run")

    assert sorted(result.uploaded) == sorted([*originals, "SHA256SUMS"]) and result.skipped == []
    sums = (bundle / "SHA256SUMS").read_text()
    assert sums == "".join(f"{originals[name]}  {name}\n" for name in sorted(originals))
    assert result.bytes_uploaded == sum((bundle / n).stat().st_size for n in originals) + len(sums)
    assert tree(bundle / ".." / "store" / "local-run") == {**originals, "SHA256SUMS": sha256(bundle / "SHA256SUMS")}
    if shutil.which("sha256sum"):
        subprocess.run(["sha256sum", "--check", "--quiet", "SHA256SUMS"], cwd=store.root / "local-run", check=True)
    assert store.list_runs() == ["local-run"] and store.exists("local-run") and not store.exists("other")
    assert [p.name for p in store.root.iterdir()] == ["local-run"]  # no temp folder left behind
    assert store.verify("local-run").files == 3

    copy = store.get_bundle(store.uri_for("local-run"), tmp_path / "downloads")
    assert tree(copy) == tree(store.root / "local-run")
    assert store.get_bundle("local-run", tmp_path / "downloads") == copy


def test_second_put_touches_nothing(bundle, store):
    store.put_bundle(bundle, "local-run")
    stored = store.root / "local-run"
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in stored.rglob("*") if p.is_file()}

    again = store.put_bundle(bundle, "local-run")

    assert (again.uploaded, again.bytes_uploaded, len(again.skipped)) == ([], 0, 4)
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in stored.rglob("*") if p.is_file()} == before


def test_different_stored_content_is_a_conflict_unless_replace(bundle, store):
    store.put_bundle(bundle, "local-run")
    stored_log = store.root / "local-run" / "app1" / "access.log"
    stored_log.write_text("tampered\n")

    with pytest.raises(BundleConflict, match=f"{stored_log}: stored content differs"):
        store.put_bundle(bundle, "local-run")
    assert stored_log.read_text() == "tampered\n"  # nothing written on conflict
    with pytest.raises(StoreError, match="access.log: sha256 .* but SHA256SUMS says"):
        store.verify("local-run")

    result = store.put_bundle(bundle, "local-run", replace=True)
    assert result.replaced == ["app1/access.log"] and sha256(stored_log) == sha256(bundle / "app1" / "access.log")
    assert store.verify("local-run").files == 3


def test_added_files_are_stored_but_changed_local_files_are_refused(bundle, store):
    store.put_bundle(bundle, "local-run")
    (bundle / "app1" / "jstat.log").write_text("late log\n")
    result = store.put_bundle(bundle, "local-run")
    assert result.uploaded == ["app1/jstat.log", "SHA256SUMS"] and store.verify("local-run").files == 4

    (bundle / "app1" / "vmstat.log").write_bytes(b"rewritten")
    with pytest.raises(BundleConflict, match="changed or vanished since its SHA256SUMS was written: app1/vmstat.log"):
        store.put_bundle(bundle, "local-run")


def test_bundle_errors_name_the_path(tmp_path, bundle, store):
    with pytest.raises(StoreError, match=r"run_id is 'local-run', the bundle is being stored as 'other-run'"):
        store.put_bundle(bundle, "other-run")
    with pytest.raises(StoreError, match="not a bundle \\(no run.yaml\\)"):
        store.put_bundle(tmp_path, "local-run")
    with pytest.raises(StoreError, match="run id '../x'"):
        store.put_bundle(bundle, "../x")
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    (bundle / "link.log").symlink_to(outside)
    with pytest.raises(StoreError, match="link.log: links to a file outside the bundle"):
        store.put_bundle(bundle, "local-run")
    with pytest.raises(BundleNotFound, match="local-run: no stored bundle"):
        store.get_bundle("local-run", tmp_path / "downloads")
    with pytest.raises(StoreError, match="not a bundle of the store"):
        store.get_bundle("file:///elsewhere/local-run", tmp_path / "downloads")


def test_get_bundle_never_overwrites_a_different_local_copy(bundle, store, tmp_path):
    store.put_bundle(bundle, "local-run")
    copy = store.get_bundle("local-run", tmp_path / "downloads")
    (copy / "run.yaml").write_text("edited\n")
    with pytest.raises(StoreError, match="already exists and differs .* \\(run.yaml\\)"):
        store.get_bundle("local-run", tmp_path / "downloads")
    assert (copy / "run.yaml").read_text() == "edited\n"


def test_report_published_next_to_the_bundle(bundle, store, tmp_path):
    store.put_bundle(bundle, "local-run")
    report = tmp_path / "report.html"
    report.write_text("<h1>1</h1>")
    uri = store.put_file("local-run", "report/index.html", report)
    assert uri == (store.root / "local-run" / "report" / "index.html").as_uri()
    report.write_text("<h1>2</h1>")  # a re-ingest renders a new report: it replaces the old one
    store.put_file("local-run", "report/index.html", report)
    assert (store.root / "local-run" / "report" / "index.html").read_text() == "<h1>2</h1>"
    for relative in ("run.yaml", "SHA256SUMS", "app1/access.log", "../escape.html", "/abs.html"):
        with pytest.raises(StoreError):
            store.put_file("local-run", relative, report)
    assert store.verify("local-run").files == 3 and store.list_runs() == ["local-run"]


def test_a_failed_copy_leaves_no_partial_bundle(bundle, tmp_path):
    """A real write failure half way (a 100 kB file-size limit, EFBIG) in a child process."""
    root = tmp_path / "store"
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(Path.cwd())!r})
        from tasks.store.base import StoreError
        from tasks.store.local import LocalStore
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))
        try:
            LocalStore({str(root)!r}).put_bundle({str(bundle)!r}, "local-run")
        except StoreError as exc:
            print(exc)
            sys.exit(3)
    """)
    before = tree(bundle)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert "storing the bundle failed (File too large)" in done.stdout and f"{bundle} is intact" in done.stdout
    assert list(root.iterdir()) == []  # neither the run folder nor a temp folder
    assert {k: v for k, v in tree(bundle).items() if k != "SHA256SUMS"} == before
    assert LocalStore(root).put_bundle(bundle, "local-run").bytes_uploaded > 0  # and it can be put again


def test_a_stored_checksum_list_cannot_point_outside_the_download(bundle, store, tmp_path):
    store.put_bundle(bundle, "local-run")
    (store.root / "local-run" / "SHA256SUMS").write_text(f"{'0' * 64}  ../../escape.txt\n")
    with pytest.raises(StoreError, match="line 1: '../../escape.txt' is not a relative path inside the bundle"):
        store.get_bundle("local-run", tmp_path / "downloads")
    assert not (tmp_path / "escape.txt").exists()
