"""A real DuckLake for tests: PostgreSQL (Debian's server binaries) as the catalog, moto S3 for the data.

`pg_server` runs `initdb` and `pg_ctl` once per session in a temporary folder, as an unprivileged user when
the tests run as root (PostgreSQL refuses root), on a free 127.0.0.1 port with its socket in that folder.
`new_lake(name)` makes a fresh catalog database and bucket prefix and returns the lake's URL; the S3 keys
come from the environment, as on a worker, never from the URL. Database names come from `unique_name`
(the pytest-xdist worker and a uuid), so two fixtures or workers asking for one name never share a lake.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import boto3
import pytest

from tasks.warehouse.moving import copy_runs

from tests.integration.s3server import free_port, s3_endpoint  # noqa: F401 - the fixture new_lake uses

# Debian's postgresql package: /usr/lib/postgresql/<major>/bin (the newest one found)
PG_BIN = Path(os.environ.get("PERFCAMPAIGN_PG_BIN") or max(Path("/usr/lib/postgresql").glob("*/bin"),
                                                            key=lambda p: int(p.parent.name), default=Path("/none")))
BUCKET = "perfcampaign-lake"


def unique_name(name: str) -> str:
    """`name` made unique to this pytest-xdist worker ($PYTEST_XDIST_WORKER) and call: a PostgreSQL identifier."""
    return f"{name}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{uuid.uuid4().hex[:8]}".lower()


class PostgresServer:
    """One PostgreSQL cluster in a temporary folder, started with pg_ctl, reached on 127.0.0.1:port."""

    def __init__(self) -> None:
        if not (PG_BIN / "initdb").exists():
            pytest.skip(f"no PostgreSQL server binaries in {PG_BIN}: apt-get install postgresql (make system-test-deps)")
        self.folder = Path(tempfile.mkdtemp(prefix="perfcampaign-pg-"))
        self.port = free_port()
        self.user = "nobody" if os.geteuid() == 0 else None
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(self.folder, pw.pw_uid, pw.pw_gid)

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user else []
        subprocess.run([*prefix, *command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       cwd=self.folder)

    def start(self) -> None:
        data = self.folder / "data"
        self._run(str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(self.folder / "log"), "-w", "start")

    def create_database(self, name: str) -> None:
        self._run(str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)

    def create_password_role(self, role: str, password: str, database: str) -> None:
        """A role that must give its password (scram-sha-256 on 127.0.0.1), owning a new database."""
        hba = self.folder / "data" / "pg_hba.conf"
        hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())  # first match wins
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.folder / "data"), "reload")
        for sql in (f"create role {role} login password '{password}'", f"create database {database} owner {role}"):
            self._run(str(PG_BIN / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-c", sql)

    def stop(self) -> None:
        try:
            self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def new_lake(pg_server: PostgresServer, s3_endpoint: str) -> Iterator[Callable[[str], str]]:  # noqa: F811
    """Makes a fresh lake (catalog database + bucket prefix) by name and returns its URL; the S3 keys are in
    the environment for the session (module fixtures run before conftest's per-test ones), as on a worker."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "testing")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=BUCKET)

        def make(name: str) -> str:
            name = unique_name(name)
            pg_server.create_database(name)
            return (f"ducklake:postgres:dbname={name} host=127.0.0.1 port={pg_server.port} user=postgres "
                    f"data_path=s3://{BUCKET}/{name}/ endpoint_url={s3_endpoint}")

        yield make


def lake_copy(request: pytest.FixtureRequest, warehouse: Path, name: str) -> str:
    """A fresh lake holding every run of a file warehouse, copied by `warehouse copy`'s code: the rows a lake
    ingest lands, in one copy instead of one lake ingest per run (a lake ingest costs 5-30 s)."""
    lake = request.getfixturevalue("new_lake")(name)
    copy_runs(warehouse, lake)
    return lake


def on_both_engines(file_fixture: str, name: str, scope: str = "module"):
    """A fixture giving the warehouse file that the fixture `file_fixture` builds, then the same runs in a lake:
    the checks that take it run on both engines, the lake's made once per `scope`."""
    @pytest.fixture(scope=scope, params=["file", "lake"])
    def warehouse(request: pytest.FixtureRequest) -> Path | str:
        path = request.getfixturevalue(file_fixture)
        return path if request.param == "file" else lake_copy(request, path, name)
    return warehouse
