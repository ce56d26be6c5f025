"""The two engines behind one warehouse setting: a DuckDB file, or a DuckLake (catalog + Parquet data path).

`--warehouse` / $PERFCAMPAIGN_WAREHOUSE is a file path (default), or a DuckLake URL:

    ducklake:postgres:dbname=perf host=db.internal port=5432 data_path=s3://bucket/warehouse/
    ducklake:/srv/perf/catalog.ducklake [data_path=/srv/perf/data/]

A PostgreSQL catalog takes many writers on many machines; a local catalog (a DuckDB file) is one machine's.
Credentials never appear in the setting (it is logged and passed to flows): PostgreSQL reads PGUSER,
PGPASSWORD (or ~/.pgpass) as libpq does, S3 the AWS variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_REGION, AWS_ENDPOINT_URL) or the AWS credential chain; or Prefect blocks the setting names:
`password_block=NAME` (a Secret holding the catalog's password) and `s3_credentials_block=NAME` (as a
store's `credentials_block`: AwsCredentials, or a Secret holding JSON keys). Their values go into
temporary DuckDB secrets and the lock's PostgreSQL connection only. The extensions are loaded from their
PyPI packages' files: nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from tasks.bundle.printable import say

LAKE_PREFIX = "ducklake:"
LAKE_ALIAS = "lake"
# Our keys in a lake URL; every other key=value of a postgres: catalog goes to libpq as it is.
LAKE_KEYS = ("data_path", "endpoint_url", "region", "url_style", "password_block", "s3_credentials_block")
SECRET_KEYS = ("password", "sslpassword", "passfile", "key_id", "secret", "aws_secret_access_key")


class LakeSettingError(ValueError):
    """The warehouse setting is not a DuckLake URL this program can use."""


@dataclass(frozen=True)
class Lake:
    """A DuckLake: its catalog (`postgres:<libpq keywords>` or a catalog file) and where its Parquet goes."""

    url: str  # as given: holds no secret (refused), so it may be logged and handed to flows
    catalog: str
    options: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def __str__(self) -> str:
        return self.url

    @property
    def name(self) -> str:
        return self.url

    @property
    def is_postgres(self) -> bool:
        return self.catalog.startswith("postgres:")

    @property
    def catalog_file(self) -> Path | None:
        """The local catalog file, which one process writes at a time (None for PostgreSQL)."""
        return None if self.is_postgres else Path(self.catalog)

    @property
    def data_path(self) -> str:
        default = None if self.is_postgres else f"{self.catalog}.files/"
        path = self.options.get("data_path") or default
        if not path:
            raise LakeSettingError(f"{self.url}: a PostgreSQL catalog needs data_path=s3://bucket/prefix/ "
                                   "(or a folder every worker sees)")
        return path if path.endswith("/") else path + "/"

    def exists(self) -> bool:
        return self.is_postgres or Path(self.catalog).exists()


def parse_warehouse(setting: str | os.PathLike) -> Path | Lake:
    """A DuckDB file's path, or the Lake a `ducklake:` URL names."""
    if isinstance(setting, Lake):
        return setting
    text = str(setting)
    if not text.startswith(LAKE_PREFIX):
        return Path(text)
    rest = text.removeprefix(LAKE_PREFIX).strip()
    if rest.startswith("postgres:"):
        head, words = "postgres:", rest.removeprefix("postgres:").split()
    else:
        head, *words = rest.split() or [""]
    options, libpq = {}, []
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not value:
            raise LakeSettingError(f"{text}: {word!r} is not key=value")
        if key in SECRET_KEYS:
            raise LakeSettingError(f"{LAKE_PREFIX}...: {key}= does not belong in the warehouse setting (it is "
                                   "logged); set PGPASSWORD / ~/.pgpass or the AWS variables")
        if key in LAKE_KEYS:
            options[key] = value
        elif head == "postgres:":
            libpq.append(word)
        else:
            raise LakeSettingError(f"{text}: unknown option {key!r} (known: {', '.join(LAKE_KEYS)})")
    if head != "postgres:" and "password_block" in options:
        raise LakeSettingError(f"{text}: password_block= is the password of a ducklake:postgres: catalog")
    if head == "postgres:" and not libpq:
        raise LakeSettingError(f"{text}: expected ducklake:postgres:dbname=NAME host=HOST port=PORT data_path=...")
    if not head:
        raise LakeSettingError(f"{text}: expected ducklake:/path/catalog.ducklake or ducklake:postgres:...")
    return Lake(text, head + " ".join(libpq), options)


def extension_file(name: str) -> str:
    """The `.duckdb_extension` file the PyPI package `duckdb-extension-<name>` installs for this DuckDB."""
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    if spec is None or not spec.submodule_search_locations:
        raise LakeSettingError(f"the DuckDB extension {name!r} is not installed: pip install "
                               f"'duckdb-extension-{name.replace('_', '-')}=={duckdb.__version__}'")
    folder = Path(next(iter(spec.submodule_search_locations))) / "extensions" / f"v{duckdb.__version__}"
    found = sorted(folder.glob("*.duckdb_extension"))
    if not found:
        raise LakeSettingError(f"no {name} extension for DuckDB {duckdb.__version__} in {folder}")
    return str(found[0])


# DuckDB checks an extension's signature at every LOAD, in every connection: 0.65 s of CPU for a lake's three
# (ducklake, postgres_scanner, httpfs: 98 MB hashed), which a command that opens the lake twice paid twice. A file
# is checked once a process, in a connection of its own with DuckDB's default (signatures required); the lake's
# connections, made with unsigned extensions allowed (UNCHECKED_LOADS), then load only files checked so, and
# require signatures again once they are loaded.
UNCHECKED_LOADS = {"allow_unsigned_extensions": "true"}
_checked: set[tuple[str, int, int, int, int]] = set()


def _file_identity(path: str) -> tuple[str, int, int, int, int]:
    """A file as the kernel knows it: any change to it (a copy over it, a write, a touch) changes its ctime."""
    stat = os.stat(path)
    return path, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def load_extension(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """LOAD an extension from its package, its signature checked by DuckDB once in this process."""
    path = extension_file(name)
    identity = _file_identity(path)
    if identity not in _checked:
        with duckdb.connect() as checking:  # DuckDB's default: a signature that is missing or wrong is refused
            checking.execute(f"load '{path}'")
        if _file_identity(path) == identity:  # the file checked is the one seen before it (not replaced meanwhile)
            _checked.add(identity)
    con.execute(f"load '{path}'")


def attach_lake(con: duckdb.DuckDBPyConnection, lake: Lake, write: bool, alias: str = LAKE_ALIAS) -> None:
    """Load the extensions, give S3 its credentials, attach the lake (as the default catalog, unless it is
    attached beside another under another alias)."""
    names = ["ducklake", *(["postgres_scanner"] if lake.is_postgres else [])]
    if lake.data_path.startswith("s3://"):
        names.append("httpfs")  # `aws` only for the credential chain (_create_s3_secret): 0.1 s a command
    for name in names:
        load_extension(con, name)
    if lake.data_path.startswith("s3://"):
        _create_s3_secret(con, lake)
    con.execute("set allow_unsigned_extensions = false")  # any later LOAD on this connection is checked
    options = [f"data_path '{_quoted(lake.data_path)}'", *([] if write else ["read_only"])]
    if lake.options.get("password_block"):
        secret = f"perfcampaign_catalog_{alias}"  # the catalog's password, in no connection string
        con.execute(f"create or replace temporary secret {secret} "
                    f"(type postgres, password '{_quoted(_catalog_password(lake))}')")
        options.append(f"metadata_parameters map {{'secret': '{secret}'}}")
    for attempt in range(5):
        try:
            con.execute(f"attach '{_quoted(LAKE_PREFIX + lake.catalog)}' as {alias} ({', '.join(options)})")
            break
        except duckdb.Error as exc:
            if "Failed to initialize DuckLake" in str(exc) and attempt < 4:
                time.sleep(0.2 + attempt)  # another writer is making the new catalog's tables: they will be there
                continue
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise LakeSettingError(f"cannot attach the lake {lake.url}: {reason}") from None
    if alias == LAKE_ALIAS:
        con.execute(f"use {LAKE_ALIAS}")
    if not write:  # the only files a reader may touch once external access is off (connection.py)
        con.execute("set allowed_directories = $paths", {"paths": [lake.data_path]})


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def _create_s3_secret(con: duckdb.DuckDBPyConnection, lake: Lake) -> None:
    """A temporary S3 secret from the AWS variables, else the AWS credential chain; never logged."""
    endpoint = lake.options.get("endpoint_url") or os.environ.get("AWS_ENDPOINT_URL_S3") \
        or os.environ.get("AWS_ENDPOINT_URL")
    region = lake.options.get("region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    params: dict[str, str] = {"region": region or "us-east-1"}
    if lake.options.get("s3_credentials_block"):
        params |= _block_s3_keys(lake.options["s3_credentials_block"])
        provider = "config"
    elif os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get("AWS_SECRET_ACCESS_KEY"):
        params |= {"key_id": os.environ["AWS_ACCESS_KEY_ID"], "secret": os.environ["AWS_SECRET_ACCESS_KEY"]}
        if os.environ.get("AWS_SESSION_TOKEN"):
            params["session_token"] = os.environ["AWS_SESSION_TOKEN"]
        provider = "config"
    else:
        load_extension(con, "aws")
        provider = "credential_chain"
    if endpoint:
        parts = urlsplit(endpoint)
        params |= {"endpoint": parts.netloc, "use_ssl": str(parts.scheme == "https").lower(),
                   "url_style": lake.options.get("url_style", "path")}
    settings = ", ".join(f"{key} '{_quoted(value)}'" for key, value in params.items())
    try:
        con.execute(f"create or replace temporary secret perfcampaign_lake (type s3, provider {provider}, {settings})")
    except duckdb.Error:
        raise LakeSettingError(f"{lake.url}: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                               "(or AWS_PROFILE / an instance role)") from None


def _catalog_password(lake: Lake) -> str:
    """The catalog's password from the Prefect Secret block `password_block` names."""
    from prefect.blocks.system import Secret  # heavy: Prefect, and a call to its API

    name = lake.options["password_block"]
    try:
        value = Secret.load(name, _sync=True).get()
    except ValueError:
        raise LakeSettingError(f"password_block {name!r}: no Prefect Secret block of that name") from None
    if not isinstance(value, str) or not value:
        raise LakeSettingError(f"password_block {name!r}: the Secret must hold the password as text")
    return value


def _block_s3_keys(name: str) -> dict[str, str]:
    """DuckDB S3 secret keys from a Prefect block, read as a bundle store reads its `credentials_block`."""
    from tasks.store.bundle_files import StoreError  # heavy: boto3
    from tasks.store.s3_client import load_block_credentials  # heavy: boto3, Prefect

    try:
        loaded = load_block_credentials(name)
    except StoreError as exc:
        raise LakeSettingError(f"s3_credentials_block: {exc}") from None
    if not isinstance(loaded, dict):  # an AwsCredentials block's boto3 session
        frozen = loaded.get_credentials().get_frozen_credentials()
        loaded = {"aws_access_key_id": frozen.access_key, "aws_secret_access_key": frozen.secret_key,
                  "aws_session_token": frozen.token}
    keys = {"key_id": loaded["aws_access_key_id"], "secret": loaded["aws_secret_access_key"]}
    return keys | ({"session_token": loaded["aws_session_token"]} if loaded.get("aws_session_token") else {})


def _pg_keywords(lake: Lake) -> dict[str, str]:
    """asyncpg's connect() arguments from the catalog's libpq keywords (the rest comes from PG* variables)."""
    rename = {"dbname": "database"}
    words = dict(word.partition("=")[::2] for word in lake.catalog.removeprefix("postgres:").split())
    keywords = {rename.get(key, key): value for key, value in words.items()
                if key in ("dbname", "host", "port", "user")}
    return keywords | ({"password": _catalog_password(lake)} if lake.options.get("password_block") else {})


@contextmanager
def lake_lock(warehouse: Path | Lake, key: str, waiting: str) -> Iterator[None]:
    """Hold PostgreSQL's advisory lock `key` of a lake's catalog: the holders of one key run one after the other.

    DuckLake lets writers commit side by side and refuses a commit only when another writer deleted from a
    table this one writes, after this one began: two first loads of one run_id would both delete nothing and
    both insert, and two analyses of one history would each store what its own snapshot showed. The lock is
    the PostgreSQL session's: a killed process frees it. A file, or a local catalog, has one writer at a
    time anyway (its lock file): nothing to hold.
    """
    if not isinstance(warehouse, Lake) or not warehouse.is_postgres:
        yield
        return
    import asyncio  # 25 ms at every command's start-up otherwise; only lake writers use it

    import asyncpg  # heavy: only lake writers need a PostgreSQL client of their own

    loop = asyncio.new_event_loop()
    try:
        pg = loop.run_until_complete(asyncpg.connect(**_pg_keywords(warehouse)))
    except (OSError, asyncpg.PostgresError) as exc:
        loop.close()
        raise LakeSettingError(f"cannot reach the lake's catalog ({warehouse.url}): {exc}") from None
    try:
        if not loop.run_until_complete(pg.fetchval("select pg_try_advisory_lock(hashtextextended($1, 0))", key)):
            say(f"waiting: {waiting} ({warehouse.url})...")
            loop.run_until_complete(pg.execute("select pg_advisory_lock(hashtextextended($1, 0))", key))
        yield
    finally:
        loop.run_until_complete(pg.close())
        loop.close()


def in_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this connection writes to a DuckLake (whose default catalog attach_lake set)."""
    return con.execute("select current_database()").fetchone()[0] == LAKE_ALIAS
