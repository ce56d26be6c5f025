"""`perfcampaign site`: builds the site into --out and prints the home page's path; a second run writes nothing."""

from __future__ import annotations

from typer.testing import CliRunner

from tasks.cli.main import app


def test_site_command_builds_and_prints_the_home_page(site_history, tmp_path):
    out = tmp_path / "site"
    first = CliRunner().invoke(app, ["site", "--out", str(out), "-w", str(site_history)])
    assert first.exit_code == 0, first.output
    assert first.stdout.strip() == str((out / "index.html").resolve())
    assert "campaigns/nightly/index.html" in (out / "index.html").read_text()
    again = CliRunner().invoke(app, ["site", "--out", str(out), "-w", str(site_history)])
    assert again.exit_code == 0 and "0 written" in again.stderr
