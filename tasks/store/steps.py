"""Storing a bundle as a Prefect task: uploads are idempotent (only what is missing is sent), so retried."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from tasks.bundle.printable import say
from tasks.store.base import StoreConfig, StoreUnavailable
from tasks.store.factory import open_store


def _store_down(task, task_run, state) -> bool:
    """Retry only a store that could not be reached, never a conflict or a bad bundle."""
    try:
        state.result()
    except StoreUnavailable:
        return True
    except Exception:  # noqa: BLE001 - any other failure is final
        return False
    return False


@task(name="store-bundle", task_run_name="store-bundle", cache_policy=NO_CACHE, retry_condition_fn=_store_down)
def store_task(bundle: str, run_id: str, store: StoreConfig) -> str:
    """Put the bundle into the store, verified; returns the stored bundle's URI."""
    result = open_store(store).put_bundle(Path(bundle), run_id)
    say(f"Bundle stored: {result.summary()}", err=False)
    return result.uri


def store_bundle_task(store: StoreConfig):
    """`store_task` retried as the store config says: a store down for minutes is worth waiting for."""
    return store_task.with_options(retries=store.bundle_attempts - 1, retry_delay_seconds=store.bundle_retry_delay_s)
