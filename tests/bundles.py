"""Write small perflog bundles for tests: a run.yaml plus copies of raw files."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml


def write_bundle(
    root: Path,
    files: dict[str, Path | str | bytes],
    sources: list[dict],
    iterations: list[dict],
    requirements: list[dict] | None = None,
    run_id: str = "test-run",
    **extra,
) -> Path:
    """Create `root` with the given files (copied from a path, or written from text/bytes) and a manifest."""
    root.mkdir(parents=True, exist_ok=True)
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    manifest = {
        "format": 1,
        "run_id": run_id,
        "campaign": "test",
        "scenario": "unit",
        "timezone": "UTC",
        "iterations": iterations,
        "requirements": requirements or [],
        "sources": sources,
        **extra,
    }
    (root / "run.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root
