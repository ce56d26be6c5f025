"""Build the site into a folder: every page rendered from the warehouse, written only when its text changed (so
one run's update rewrites only the pages it changes, and a sync to a bucket uploads only those), pages of
events that no longer exist removed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from tasks.site import pages
from tasks.site.data import read_site
from tasks.warehouse.connection import Lake, open_warehouse


@dataclass
class SiteResult:
    """What a build did: every page (relative paths), the ones it wrote and the ones it removed; when published,
    the stored pages it deleted from the store."""

    out: Path
    pages: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unpublished: list[str] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.out / "index.html"


def render(warehouse: Path | Lake, site_root: str) -> dict[str, str]:
    """Every page of the site: {path relative to the site's root: html}."""
    with open_warehouse(warehouse) as con:
        campaigns = read_site(con)
    out = {"index.html": pages.home(campaigns, site_root)}
    for data in campaigns:
        out.update(pages.campaign(data, site_root))
        for event in data.events:
            path, text = pages.event(data, event, site_root)
            out[path] = text
    return out


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_site(rendered: dict[str, str], out: Path) -> SiteResult:
    """Write the pages whose content changed; remove the site's pages that are no longer rendered."""
    result = SiteResult(out=out, pages=sorted(rendered))
    for path, text in sorted(rendered.items()):
        target = out / path
        data = text.encode("utf-8")
        if target.is_file() and _digest(target.read_bytes()) == _digest(data):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        result.written.append(path)
    for stale in sorted((out / "campaigns").rglob("*.html")) if (out / "campaigns").is_dir() else []:
        relative = stale.relative_to(out).as_posix()
        if relative not in rendered:
            stale.unlink()
            result.removed.append(relative)
    return result


def build_site(warehouse: Path | Lake, out: Path, site_root: str | None = None) -> SiteResult:
    """Render the site from the warehouse and write it to `out`; `site_root` is where it will be served from
    (the folder by default; an s3:// URI when published to a bucket), for the links to reports and bundles."""
    return write_site(render(warehouse, site_root or str(out.resolve())), out)
