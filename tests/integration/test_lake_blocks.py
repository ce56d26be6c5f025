"""A lake's credentials from Prefect blocks (real Prefect server, PostgreSQL asking for a password, moto S3):
the warehouse setting names the blocks, the worker's environment holds no key, nothing prints or stores one."""

from __future__ import annotations

import os
import subprocess
import uuid

import boto3
import pytest
from prefect.blocks.system import Secret

from tasks.warehouse.connection import WarehouseError, open_warehouse
from tests.golden.public_tables import ROOT
from tests.integration.test_lake import CLI, echo_bundle
from tests.lakeserver import BUCKET, pg_server, s3_endpoint, unique_name  # noqa: F401 - the lake's fixtures

pytestmark = pytest.mark.integration


def test_a_lake_takes_its_catalog_password_and_s3_keys_from_prefect_blocks(prefect_server, pg_server, s3_endpoint,
                                                                          tmp_path, monkeypatch):
    from prefect.settings import PREFECT_API_URL

    password, key_id, secret_key = f"pw-{uuid.uuid4().hex}", "key-from-block", f"sk-{uuid.uuid4().hex}"
    role, database = unique_name("lake_writer"), unique_name("blocks")
    pg_server.create_password_role(role, password, database)
    Secret(value=password).save("lake-catalog-password", overwrite=True)
    Secret(value={"aws_access_key_id": key_id, "aws_secret_access_key": secret_key}).save("lake-s3", overwrite=True)
    catalog = f"ducklake:postgres:dbname={database} host=127.0.0.1 port={pg_server.port} user={role}"
    where = f"data_path=s3://{BUCKET}/{database}/ endpoint_url={s3_endpoint}"
    lake = f"{catalog} {where} password_block=lake-catalog-password s3_credentials_block=lake-s3"
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=BUCKET)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD"):
        monkeypatch.delenv(name, raising=False)
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PGPASSFILE": str(tmp_path / "none")}
    done = subprocess.run([*CLI, "ingest", str(echo_bundle(tmp_path / "echo", "echo-blocks")), "--warehouse", lake],
                          cwd=ROOT, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert password not in done.stdout + done.stderr and secret_key not in done.stdout + done.stderr
    with open_warehouse(lake) as con:
        assert con.execute("select count(*) from runs where run_id = 'echo-blocks'").fetchone()[0] == 1
        s3 = con.execute("select secret_string from duckdb_secrets() where name = 'perfcampaign_lake'").fetchone()[0]
        assert f"key_id={key_id}" in s3 and secret_key not in s3  # the block's keys, shown redacted
        stored = " ".join(str(row) for table in ("runs", "sources", "warehouse_meta")
                          for row in con.execute(f"select * from {table}").fetchall())
    assert password not in stored and secret_key not in stored
    for setting, refusal in (  # the same lake without one block or the other: the environment has no key
            (f"{catalog} {where} s3_credentials_block=lake-s3", "password authentication failed|no password supplied"),
            (f"{catalog} {where} password_block=lake-catalog-password", "no S3 credentials"),
            (f"{catalog} {where} password_block=no-such-block s3_credentials_block=lake-s3",
             "password_block 'no-such-block': no Prefect Secret block")):
        with pytest.raises(WarehouseError, match=refusal):
            with open_warehouse(setting):
                pass
