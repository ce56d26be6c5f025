"""The two campaigns' warehouse the site's tests share (tests/site_history.py), and the site built from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tasks.site.build import SiteResult, build_site
from tests.site_history import site_history  # noqa: F401 - the session fixture


@pytest.fixture(scope="module")
def site(site_history, tmp_path_factory) -> SiteResult:  # noqa: F811 - the imported fixture
    return build_site(site_history, tmp_path_factory.mktemp("site") / "site")


@pytest.fixture
def copy(site_history, tmp_path) -> Path:  # noqa: F811 - the imported fixture
    """A copy of the warehouse that a test may change."""
    target = tmp_path / "w.duckdb"
    shutil.copyfile(site_history, target)
    return target
