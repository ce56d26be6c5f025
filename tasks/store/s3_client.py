"""The boto3 side of the S3 store: client and credentials, error classification, log redaction.

Credentials come from the standard AWS chain (environment, shared config, instance/container role) or,
when `credentials_block` names one, from a Prefect block: prefect-aws `AwsCredentials` when that package
is installed, else a `Secret` holding JSON `{"aws_access_key_id": ..., "aws_secret_access_key": ...}`.
They are handed to boto3 and never kept, printed or put into an error.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable

import boto3
from boto3.exceptions import Boto3Error, RetriesExceededError, S3UploadFailedError
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotoConnectionError

from tasks.store.base import StoreConfig
from tasks.store.bundle_files import StoreError

AWS_ERRORS = (BotoCoreError, ClientError, Boto3Error)
TRANSIENT_CODES = frozenset({
    "SlowDown", "Throttling", "ThrottlingException", "RequestThrottled", "TooManyRequestsException",
    "RequestLimitExceeded", "BandwidthLimitExceeded", "RequestTimeout", "RequestTimeoutException",
    "InternalError", "ServiceUnavailable", "PriorRequestNotComplete",
})
DENIED_CODES = frozenset({"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
                           "InvalidToken", "AllAccessDisabled", "AccountProblem"})


def make_client(config: StoreConfig, on_call: Callable[..., None], on_attempt: Callable[..., None]):
    """An S3 client for the config: standard retry mode, timeouts, path-style for custom endpoints.

    `on_call` runs once per API call and `on_attempt` once per HTTP request sent, so that the
    difference is the number of requests botocore retried.
    """
    _redact_botocore_debug_log()  # again after the client: its modules may have made more loggers
    client = make_session(config).client("s3", endpoint_url=config.endpoint_url, config=Config(
        retries={"max_attempts": config.request_attempts, "mode": "standard"},
        connect_timeout=config.connect_timeout_s,
        read_timeout=config.read_timeout_s,
        max_pool_connections=max(10, 2 * config.max_concurrency),
        s3={"addressing_style": config.addressing_style or ("path" if config.endpoint_url else "auto")},
        request_checksum_calculation=config.transfer_checksums,
    ))
    client.meta.events.register("before-call.s3", on_call)
    client.meta.events.register("request-created.s3", on_attempt)
    _redact_botocore_debug_log()
    return client


def make_session(config: StoreConfig) -> boto3.session.Session:
    """A boto3 session: from the Prefect block when one is named, else the standard AWS chain."""
    region = config.region or ("us-east-1" if config.endpoint_url else None)
    if not config.credentials_block:
        return boto3.session.Session(region_name=region)
    loaded = load_block_credentials(config.credentials_block)
    if isinstance(loaded, boto3.session.Session):
        return loaded
    return boto3.session.Session(region_name=region, **loaded)


def load_block_credentials(name: str) -> dict[str, str] | boto3.session.Session:
    """Credentials from a Prefect block: prefect-aws AwsCredentials when installed, else a Secret with JSON."""
    try:
        from prefect_aws import AwsCredentials  # optional dependency
    except ImportError:
        AwsCredentials = None  # noqa: N806
    if AwsCredentials is not None:
        try:
            return AwsCredentials.load(name, _sync=True).get_boto3_session()
        except ValueError:
            pass  # no AwsCredentials block of that name: try a Secret
    from prefect.blocks.system import Secret

    try:
        value = Secret.load(name, _sync=True).get()
    except ValueError:
        raise StoreError(f"credentials_block {name!r}: no Prefect Secret or AwsCredentials block of that name") \
            from None
    return credentials_from_secret(value, name)


def credentials_from_secret(value: object, name: str) -> dict[str, str]:
    """boto3 keyword arguments from a Secret's value; errors never include the value."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = None
    required = ("aws_access_key_id", "aws_secret_access_key")
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) and value[k] for k in required):
        raise StoreError(f'credentials_block {name!r}: the Secret must hold JSON {{"aws_access_key_id": ..., '
                         f'"aws_secret_access_key": ...}} (and optionally "aws_session_token")')
    return {k: value[k] for k in (*required, "aws_session_token") if isinstance(value.get(k), str) and value[k]}


def cause_of(exc: BaseException) -> BaseException:
    """The botocore error inside boto3's transfer wrappers (which keep it only as context)."""
    if isinstance(exc, RetriesExceededError) and exc.last_exception is not None:
        return exc.last_exception
    if isinstance(exc, S3UploadFailedError) and isinstance(exc.__cause__ or exc.__context__, Exception):
        return exc.__cause__ or exc.__context__
    return exc


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, ClientError):
        return error_code(exc) in TRANSIENT_CODES or http_status(exc) >= 500 or http_status(exc) == 429
    return isinstance(exc, (BotoConnectionError, HTTPClientError, RetriesExceededError))


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def http_status(exc: ClientError) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)


def describe(exc: BaseException) -> str:
    if isinstance(exc, ClientError):
        message = exc.response.get("Error", {}).get("Message", "")
        return f"{http_status(exc)} {error_code(exc)}" + (f": {message}" if message else "")
    return f"{exc.__class__.__name__}: {exc}"


class _RedactCredentials(logging.Filter):
    """botocore logs every request at DEBUG, credentials in several forms: hide each of them.

    The forms seen with a session token: the header dict (`'X-Amz-Security-Token': b'...'`), the canonical
    request botocore.auth signs (`x-amz-security-token:...`), presigned query strings
    (`X-Amz-Security-Token=...`), the key id in `Credential=AKIA.../...`, and config dumps
    (`aws_session_token`, `aws_secret_access_key`, `aws_access_key_id`). Key ids are hidden wherever they appear.
    """

    _SECRET = (r"(?P<key>(?:x-amz-security-token|aws_session_token|aws_secret_access_key|aws_access_key_id"
               r"|x-amz-credential)['\"]?\s*[:=]\s*b?['\"]?)[^'\"\s&,;}]+")
    _PATTERNS = (
        (re.compile(_SECRET, re.I), r"\g<key><redacted>"),
        (re.compile(r"(Credential=)[^/'\"\s,&]+", re.I), r"\1<redacted>"),
        (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "<redacted>"),
    )

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for pattern, replacement in self._PATTERNS:
            redacted = pattern.sub(replacement, redacted)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def _redact_botocore_debug_log() -> None:
    """A filter on every logger of botocore, boto3, s3transfer and urllib3 (a logger's filter sees only
    the records logged there, not those of its children, so each is given one)."""
    families = ("botocore", "boto3", "s3transfer", "urllib3")
    names = [name for name in list(logging.Logger.manager.loggerDict) if name.split(".")[0] in families]
    for name in {*families, *names, "botocore.endpoint", "botocore.auth", "botocore.hooks"}:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _RedactCredentials) for f in logger.filters):
            logger.addFilter(_RedactCredentials())
