"""One campaign per stage at a time: a Prefect global concurrency limit named after the stage."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

STAGE_LOCK_WAIT_S = 6 * 3600  # a nightly run waits for an ad-hoc one rather than failing


def stage_limit_name(stage: str) -> str:
    """The concurrency limit's name for a stage."""
    return f"stage-{stage}"


@contextmanager
def stage_lock(stage: str, timeout_s: float = STAGE_LOCK_WAIT_S) -> Iterator[None]:
    """Hold the stage's single slot for the body; the slot is leased, so a crashed run frees it."""
    from prefect.client.orchestration import get_client
    from prefect.concurrency.sync import concurrency

    name = stage_limit_name(stage)
    with get_client(sync_client=True) as client:
        client.upsert_global_concurrency_limit_by_name(name, limit=1)
    with concurrency(name, occupy=1, strict=True, timeout_seconds=timeout_s):
        yield
