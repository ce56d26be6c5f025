"""Updating the team's site after a campaign's report, as a Prefect task."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from tasks.site.links import campaign_page
from tasks.site.publish import build_and_publish
from tasks.store.base import StoreConfig
from tasks.warehouse.connection import warehouse_path

SITE_DIR = "site"  # in the work folder
PUBLISH_ENV = "PERFCAMPAIGN_SITE_PUBLISH"  # "1": each run also publishes the site into its campaign's store


def update_site(campaign: str, warehouse: str | None, store: StoreConfig | None, work_dir: str) -> str:
    """Rebuild the site in `work_dir/site` (only changed pages are written) and, when $PERFCAMPAIGN_SITE_PUBLISH
    is 1, publish it into the campaign's store; returns a Markdown line linking the campaign's page.

    The run's data and report are already safe, and `perfcampaign site` rebuilds the site at any time, so a
    site that cannot be made is said here rather than failing the run."""
    try:
        publish = store if os.environ.get(PUBLISH_ENV) == "1" else None
        result, home = build_and_publish(warehouse_path(warehouse), Path(work_dir) / SITE_DIR, store_config=publish)
        page = home.removesuffix("index.html") + campaign_page(campaign)
        return f"Site: {page} ({len(result.written)} of {len(result.pages)} pages updated)"
    except Exception as exc:  # noqa: BLE001 - see the docstring
        traceback.print_exc(file=sys.stderr)
        return f"Site NOT updated ({type(exc).__name__}: {exc}); rebuild it with `perfcampaign site`."


@task(name="site", task_run_name="site", cache_policy=NO_CACHE)
def site_task(campaign: str, warehouse: str | None, store: StoreConfig | None, work_dir: str) -> str:
    """Update the site after the report; returns a Markdown line."""
    return update_site(campaign, warehouse, store, work_dir)
