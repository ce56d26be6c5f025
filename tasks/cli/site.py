"""`perfcampaign site`: build the team's static site from the warehouse into a folder, or publish it next to the
bundles of a store (tasks/cli/main.py registers it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from tasks.cli.options import WarehouseOption
from tasks.cli.output import echo


def site_command(
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="folder of the site (default: ./perfcampaign-site; with --store: where it is built before upload)")] = None,
    store: Annotated[Optional[str], typer.Option("--store", help="also publish it into this store (a folder or s3://bucket/prefix), as <store>/site/")] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Build the site (home, one page per campaign and per event); only changed pages are rewritten. Prints the
    home page's path (or URI when published)."""
    from tasks.site.publish import build_and_publish  # heavy: pandas (number formats), boto3 for S3
    from tasks.warehouse.connection import warehouse_path  # heavy: duckdb

    result, home = build_and_publish(warehouse_path(warehouse), out or Path("perfcampaign-site"), store)
    echo(f"site: {len(result.pages)} pages, {len(result.written)} written, {len(result.removed)} removed"
         + (f", {len(result.unpublished)} deleted from the store" if result.unpublished else ""),
         err=True)
    echo(str(home))
