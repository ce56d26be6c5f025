"""Where pages live and how they link: relative links only, so one site works from a folder, over file:// and
from a bucket's static website. Names from bundles become safe file names; URIs of reports and bundles become
relative when they sit in the same tree (folder or bucket) as the site."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from urllib.parse import quote, urlparse

from tasks.bundle.manifest import web_url

SAFE = re.compile(r"[^A-Za-z0-9._-]")


def slug(name: str) -> str:
    """A file name for a campaign or event id: itself when safe, else its safe part and a short hash."""
    clean = SAFE.sub("_", name)[:60].strip("._") or "x"
    if clean == name:
        return name
    return f"{clean}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def campaign_page(campaign: str) -> str:
    return f"campaigns/{slug(campaign)}/index.html"


def runs_page(campaign: str, chunk: int) -> str:
    """Older runs, in chunks counted from the oldest run (so a new run leaves every full chunk's page as it was)."""
    return f"campaigns/{slug(campaign)}/runs-{chunk}.html"


def event_page(campaign: str, event_id: str) -> str:
    return f"campaigns/{slug(campaign)}/events/{slug(event_id)}.html"


def href(target: str, page: str) -> str:
    """A link from site page `page` to site page `target`, both relative to the site's root."""
    return quote(posixpath.relpath(target, posixpath.dirname(page) or "."))


def _location(uri: str) -> tuple[str, str]:
    """(tree, path) of a URI: ('file', absolute path) for a local file, ('s3://bucket', key) for S3."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return "file", os.path.abspath(parsed.path if parsed.scheme else uri)  # no realpath: 40k links
    return f"{parsed.scheme}://{parsed.netloc}", "/" + parsed.path.lstrip("/")


def outside_href(uri: str | None, site_root: str, page: str) -> str | None:
    """A link from site page `page` to a report or bundle URI: relative when it is in the site's tree (the same
    folder tree or bucket), else the URI itself when a browser can open it (http, https), else none."""
    if not uri:
        return None
    tree, path = _location(uri)
    site_tree, site_path = _location(site_root)
    if tree == site_tree:
        here = posixpath.dirname(posixpath.join(site_path, page))
        return quote(posixpath.relpath(path, here))
    return web_url(uri)
