"""Snapshot of every public table after ingesting the repository's sample bundles: rows and a digest.

A change of shape must leave these equal: `python -m tests.golden.public_tables --write` records the
snapshot (only when a change of behaviour is meant), the test `test_public_tables.py` compares with it.
Columns that differ from one ingest to the next (when, where) are left out; numbers are written with
12 significant digits so a parallel sum's last bit does not count as a change.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tasks.warehouse.connection import open_warehouse

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "data" / "samples"
SNAPSHOT = Path(__file__).with_name("public_tables.json")
# the models' fingerprint (changes with any edit of sql/, by design); a lake's source-key counter
INTERNAL = {"warehouse_meta", "lake_source_keys"}
VOLATILE = {"ingested_at", "bundle_uri", "validated_at", "created_at", "report_uri", "uri", "seconds", "path_html"}


def sample_bundles(root: Path) -> list[Path]:
    """The echo bundle as shipped, and a JMeter bundle made of the JMeter and access-log samples."""
    echo = root / "echo"
    shutil.copytree(SAMPLES / "bundle-echo", echo)
    jmeter = root / "jmeter"
    (jmeter / "gen").mkdir(parents=True)
    (jmeter / "web").mkdir(parents=True)
    shutil.copy(SAMPLES / "jmeter" / "lograter-result_20180502_142434.jtl", jmeter / "gen" / "result.jtl")
    shutil.copy(SAMPLES / "jmeter" / "perfplugin-jmeter.log", jmeter / "gen" / "jmeter.log")
    shutil.copy(SAMPLES / "access-logs" / "lograter-access.log", jmeter / "web" / "access.log")
    manifest = {
        "format": 1, "run_id": "sample-jmeter-1", "campaign": "sample-jmeter", "scenario": "samples",
        "timezone": "Europe/Amsterdam",
        "iterations": [{"index": 1, "start": "2000-01-01T00:00:00Z", "end": "2030-01-01T00:00:00Z", "load": {"threads": 1}}],
        "requirements": [{"id": "avg", "metric": "avg_ms", "op": "<", "threshold": 500, "side": "client"}],
        "sources": [
            {"kind": "jtl", "host": "gen", "path": "gen/result.jtl", "max_rejected_pct": 100},
            {"kind": "jmeter_log", "host": "gen", "path": "gen/jmeter.log", "max_rejected_pct": 100},
            {"kind": "access_log", "host": "web", "path": "web/access.log", "duration_unit": "us",
             "format": '"%h" %v %t "%r" %>s %b %D "%{Referer}i" "%{X-Forwarded-Url}i" "%{User-Agent}i"'},
        ],
    }
    (jmeter / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return [echo, jmeter]


def cell(value) -> str:
    """A value as text, floats to 12 significant digits (a parallel sum's last bit is no change), inside lists
    and structs too (capacity's points)."""
    if isinstance(value, float):
        return format(value, ".12g")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cell(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {cell(item)}" for key, item in value.items()) + "}"
    return str(value)


def snapshot(warehouse: Path | str) -> dict[str, dict[str, object]]:
    """Per public table and view of a warehouse file or lake: its columns, row count and a digest of its rows."""
    result = {}
    with open_warehouse(warehouse) as con:
        tables = [name for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main' "
            "and table_catalog = current_database() order by 1").fetchall()]
        for table in tables:
            if table in INTERNAL:
                continue
            columns = [name for (name,) in con.execute(
                "select column_name from information_schema.columns where table_name = $t and table_schema = 'main' "
                "and table_catalog = current_database() order by ordinal_position", {"t": table}).fetchall()]
            kept = [c for c in columns if c not in VOLATILE]
            rows = con.execute(f'select {", ".join(chr(34) + c + chr(34) for c in kept)} from "{table}"').fetchall()
            lines = sorted("\x1f".join(cell(v) for v in row) for row in rows)
            digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
            result[table] = {"columns": columns, "rows": len(rows), "sha256": digest}
    return result


def ingest_samples(work: Path, warehouse: Path | str | None = None) -> Path | str:
    """Ingest every sample bundle through the CLI into one new warehouse (a file unless a lake URL is given)
    and validate each run."""
    warehouse = warehouse or work / "golden.duckdb"
    cli = [sys.executable, "-c", "from tasks.cli.main import main; main()"]
    for bundle in sample_bundles(work / "bundles"):
        run_id = yaml.safe_load((bundle / "run.yaml").read_text())["run_id"]
        subprocess.run([*cli, "ingest", str(bundle), "--warehouse", str(warehouse)], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
        subprocess.run([*cli, "validate", run_id, "--warehouse", str(warehouse)], cwd=ROOT,
                       stdout=subprocess.DEVNULL)
    return warehouse


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        found = snapshot(ingest_samples(Path(tmp)))
    if "--write" in sys.argv:
        SNAPSHOT.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"wrote {SNAPSHOT}: {len(found)} tables")
    else:
        print(json.dumps(found, indent=1, sort_keys=True))
