"""The `perfcampaign` command as a user runs it: real process, exit codes, stdout vs stderr."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.bundles import write_bundle

CLI = [str(Path(sys.executable).parent / "perfcampaign")]


def run(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """The echo sample's access logs ingested through the CLI."""
    samples = Path(__file__).parents[2] / "data" / "samples" / "bundle-echo"
    tmp = tmp_path_factory.mktemp("cli")
    manifest = yaml.safe_load((samples / "run.yaml").read_text())
    sources = [s for s in manifest["sources"] if s["kind"] == "access_log"]
    bundle = write_bundle(
        tmp / "bundle", {s["path"]: samples / s["path"] for s in sources}, sources,
        manifest["iterations"], manifest["requirements"], run_id="cli-run",
    )
    warehouse = tmp / "w.duckdb"
    result = run("ingest", str(bundle), "--warehouse", str(warehouse))
    assert result.returncode == 0, result.stderr
    return warehouse, result


def test_ingest_prints_a_summary_and_progress_on_stderr(loaded):
    _, result = loaded
    assert "run cli-run: loaded" in result.stdout
    assert "requests: 9,261 server" in result.stdout
    assert "avg-under-250: server avg_ms < 250: holds" in result.stdout
    # the two small access logs are read together (docs/warehouse.md, "Reading the sources")
    assert "reading 2 access_log sources together: app1/access.log … app2/access.log (0.7 MB)" in result.stderr


def test_sql_json_is_an_array_of_objects(loaded):
    warehouse, _ = loaded
    result = run("sql", "select iteration, calls from iteration_summary order by 1", "-w", str(warehouse), "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert sum(r["calls"] for r in rows) == 9261  # every line in an iteration: the boundary seconds placed by overlap


def test_sql_csv(loaded):
    warehouse, _ = loaded
    result = run("sql", "select host, count(*) as n from requests group by 1 order by 1", "-w", str(warehouse), "-f", "csv")
    assert list(csv.reader(io.StringIO(result.stdout))) == [["host", "n"], ["app1", "4631"], ["app2", "4630"]]


def test_runs_and_show(loaded):
    warehouse, _ = loaded
    runs = run("runs", "-w", str(warehouse))
    assert "cli-run" in runs.stdout and "pass" in runs.stdout
    show = run("show", "cli-run", "-w", str(warehouse))
    assert show.returncode == 0
    lines = show.stdout.splitlines()
    assert any(line.split()[:5] == ["3", "vus=18", "server", "(all)", "6,373"] for line in lines), show.stdout


def test_errors_go_to_stderr_with_a_nonzero_exit(loaded, tmp_path):
    warehouse, _ = loaded
    bad_sql = run("sql", "select * from no_such_table", "-w", str(warehouse))
    assert bad_sql.returncode == 1 and "no_such_table" in bad_sql.stderr and bad_sql.stdout == ""
    missing = run("show", "nope", "-w", str(warehouse))
    assert missing.returncode == 1 and "no run 'nope'" in missing.stderr
    no_bundle = run("ingest", str(tmp_path), "-w", str(tmp_path / "x.duckdb"))
    assert no_bundle.returncode == 1 and "no manifest" in no_bundle.stderr
    bad_format = run("sql", "select 1", "-w", str(warehouse), "-f", "xml")
    assert bad_format.returncode != 0 and "xml" in bad_format.stderr


def test_sql_is_read_only(loaded):
    warehouse, _ = loaded
    result = run("sql", "delete from runs", "-w", str(warehouse))
    assert result.returncode == 1 and "read-only" in result.stderr.lower()


def test_a_table_too_wide_for_the_terminal_is_printed_one_record_at_a_time():
    import io
    from datetime import datetime

    from tasks.cli.output import write_rows

    columns = ["run_id", "campaign", "started_at", "requests"]
    rows = [("sample-echo-1", "sample echo campaign", datetime(2026, 12, 2, 9, 46, 48), 18522)]
    wide, narrow = io.StringIO(), io.StringIO()
    write_rows(columns, rows, "table", out=wide, width=120)
    write_rows(columns, rows, "table", out=narrow, width=40)
    assert wide.getvalue().splitlines()[1].split() == ["sample-echo-1", "sample", "echo", "campaign", "2026-12-02",
                                                       "09:46:48", "18,522"]
    records = [line.split(None, 1) for line in narrow.getvalue().splitlines()[1:]]
    assert records == [["run_id", "sample-echo-1"], ["campaign", "sample echo campaign"],
                       ["started_at", "2026-12-02 09:46:48"], ["requests", "18,522"]]
    assert max(len(line) for line in narrow.getvalue().splitlines()) <= 40


def test_text_that_looks_like_markup_prints_as_it_is(loaded):
    """Labels, column names and titles are printed literally: `[bold]` is no style, `[/x]` no error."""
    from tasks.cli.output import write_rows

    columns = ["label", "[bold]n[/bold]", "[/x]"]
    rows = [("GET /a[1]", 1, "[red]r[/red]"), ("[bold]", 22, "[link=http://x]y[/link]")]
    for width in (200, 30):  # a table, and one record at a time
        out = io.StringIO()
        write_rows(columns, rows, "table", out=out, title="[bold]GET /a[1][/bold]", width=width)
        text = out.getvalue()
        for literal in ("[bold]GET /a[1][/bold]", "[bold]n[/bold]", "[/x]", "GET /a[1]", "[red]r[/red]",
                        "[link=http://x]y[/link]"):
            assert literal in text, (width, literal, text)
    table = io.StringIO()
    write_rows(columns, rows, "table", out=table, width=200)
    assert table.getvalue().splitlines() == ["label      [bold]n[/bold]  [/x]",
                                             "GET /a[1]               1  [red]r[/red]",
                                             "[bold]                 22  [link=http://x]y[/link]"]
    # the whole road: a label from the warehouse through the command
    warehouse, _ = loaded
    shown = run("sql", "select 'GET /a[1]' as \"[/x]\", '[bold]' as label", "-w", str(warehouse))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == ["[/x]       label", "GET /a[1]  [bold]"]


def test_show_keeps_three_significant_digits_under_10_ms(tmp_path):
    from tests.bundles import write_bundle

    # a server logging microseconds (%D in µs): 40, 45, 50 µs
    lines = [f'10.0.0.1 - - [01/Jan/2026:10:00:0{n} +0000] "GET /a HTTP/1.1" 200 5 {us}' for n, us in enumerate((40, 45, 50))]
    root = write_bundle(tmp_path / "b", {"a.log": "\n".join(lines) + "\n"},
                        [{"kind": "access_log", "host": "app", "path": "a.log", "preset": "tomcat_common_d",
                          "duration_unit": "us"}],
                        [{"index": 1, "start": "2026-01-01T10:00:00Z", "end": "2026-01-01T10:01:00Z", "load": {"vus": 1}}],
                        run_id="micro")
    warehouse = tmp_path / "w.duckdb"
    assert run("ingest", str(root), "-w", str(warehouse)).returncode == 0
    shown = run("show", "micro", "-w", str(warehouse), "-f", "json")
    row = [r for r in json.loads(shown.stdout) if r["host"] == "app"][0]
    assert (row["avg"], row["p50"], row["p90"], row["max"]) == (0.045, 0.045, 0.049, 0.05)  # numpy: 45, 45, 49 µs


def test_runs_never_calls_a_failed_run_a_pass(tmp_path):
    """Every requirement holds, but the load tool exited 104: `runs`, `show`, the report and JUnit say so."""
    samples = Path(__file__).parents[2] / "data" / "samples" / "bundle-echo"
    manifest = yaml.safe_load((samples / "run.yaml").read_text())
    sources = [s for s in manifest["sources"] if s["kind"] == "access_log"]
    files = {s["path"]: samples / s["path"] for s in sources}
    warehouse = str(tmp_path / "w.duckdb")
    for run_id, status in (("good-run", "completed"), ("bad-run", "failed")):
        bundle = write_bundle(tmp_path / run_id, files, sources, manifest["iterations"], manifest["requirements"][:1],
                              run_id=run_id, status=status, status_reason="k6 on loadgen exited with 104")
        assert run("ingest", str(bundle), "--warehouse", warehouse).returncode == 0
    listed = {row["run_id"]: row["verdict"] for row in csv.DictReader(io.StringIO(
        run("runs", "--warehouse", warehouse, "--format", "csv").stdout))}
    assert listed == {"good-run": "pass", "bad-run": "RUN FAILED"}
    shown = run("show", "bad-run", "--warehouse", warehouse).stdout
    assert "bad-run: RUN FAILED (run failed: k6 on loadgen exited with 104)" in shown
    assert run("report", "bad-run", "--warehouse", warehouse, "--out", str(tmp_path / "r")).returncode == 0
    junit = (tmp_path / "r" / "junit.xml").read_text()
    assert 'type="RunNotValid"' in junit and "k6 on loadgen exited with 104" in junit
    assert "RUN FAILED" in (tmp_path / "r" / "summary.md").read_text().splitlines()[0]


def test_artifact_keys_are_valid_for_any_campaign_name():
    """Prefect refuses keys with upper case, `_` or `.`; campaign names may have all three."""
    from tasks.settings import artifact_key

    assert artifact_key("run", "Echo_v1.2") == "run-echo-v1-2"
    assert artifact_key("ingest", "flow_run.1") == "ingest-flow-run-1"
    assert len(artifact_key("report-link", "x" * 300)) == 100
