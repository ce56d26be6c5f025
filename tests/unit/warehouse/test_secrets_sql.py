"""`perfcampaign sql` cannot read the S3 credentials DuckDB was given (issue 18 fault 8), on a lake and a file.

httpfs copies the AWS variables into the settings s3_access_key_id / s3_secret_access_key / s3_session_token,
which duckdb_settings() and current_setting() showed in clear; the credentials now live only in a secret,
which duckdb_secrets() redacts.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.bundles import write_bundle
from tests.lakeserver import new_lake, pg_server, s3_endpoint  # noqa: F401 - fixtures of the lake engine
from tests.unit.test_hostile_input import REPO, WINDOW, _line

KEY_ID, SECRET, TOKEN = "AKIAPROBEKEY0000SECRET", "probe/secret+access/key0000SECRET", "probe-session-token-SECRET"
QUERIES = ["select name, value from duckdb_settings() where value ilike '%secret%'",
           "select current_setting('s3_secret_access_key') || current_setting('s3_access_key_id') "
           "|| current_setting('s3_session_token')",
           "select * from duckdb_secrets()"]


def _sql(queries: list[str], warehouse: str, env: dict) -> str:
    return "\n".join(_one_sql(query, warehouse, env) for query in queries)


def _one_sql(query: str, warehouse: str, env: dict) -> str:
    """What `sql` prints; a file warehouse refuses current_setting('s3_...') (httpfs cannot be loaded there)."""
    done = subprocess.run([sys.executable, "-c", "from tasks.cli.main import main; main()", "sql", query, "-w",
                           warehouse, "-f", "csv"], capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0 or "file system operations are disabled" in done.stderr, done.stderr[-2000:]
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def file_and_lake(new_lake, tmp_path_factory):  # noqa: F811 - the fixture imported above
    from tasks.warehouse.ingest import ingest_bundle

    tmp = tmp_path_factory.mktemp("secrets")
    source = {"kind": "access_log", "host": "app", "path": "app/a.log", "preset": "tomcat_common_d", "duration_unit": "ms"}
    root = write_bundle(tmp / "b", {"app/a.log": "".join(_line(s) + "\n" for s in range(5))}, [source], WINDOW)
    lake = new_lake("secrets")
    ingest_bundle(root, lake, progress=lambda message: None)
    ingest_bundle(root, tmp / "w.duckdb", progress=lambda message: None)
    return str(tmp / "w.duckdb"), lake


@pytest.mark.parametrize("engine", [0, 1], ids=["file", "lake"])
def test_sql_cannot_read_the_s3_credentials(file_and_lake, engine):
    # The lake reads S3 with the session's keys; the probe's keys are what a real worker's environment holds
    # beside them (the session token too), each of which must stay unreadable.
    env = {**os.environ, "PYTHONPATH": str(REPO), "AWS_SESSION_TOKEN": TOKEN}
    if engine == 0:
        env |= {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET}
    settings, secrets = (_sql(query, file_and_lake[engine], env) for query in (QUERIES[:2], QUERIES[2:]))
    shown = settings + secrets
    for secret in (SECRET, TOKEN):
        assert secret not in shown, shown
    # the lake's S3 secret is the session's (key and secret both `testing`): no setting shows it; its secret
    # row shows the key id only (DuckDB redacts the secret and the token)
    assert KEY_ID not in settings and os.environ["AWS_SECRET_ACCESS_KEY"] not in settings, settings
    assert "secret=redacted" in secrets and "session_token=redacted" in secrets or engine == 0, secrets
    assert _one_sql("select count(*) from requests", file_and_lake[engine], env).split() == ["count_star()", "5"]
