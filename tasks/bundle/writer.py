"""Writing a bundle's run.yaml from the typed manifest, so a bundle the runner writes is valid by construction."""

from __future__ import annotations

from pathlib import Path

import yaml

from tasks.bundle.manifest import MANIFEST_NAME, Manifest


def write_manifest(bundle: Path, manifest: Manifest) -> Path:
    """`bundle/run.yaml` in the documented field order; times as ISO-8601 UTC, unset fields left out."""
    data = manifest.model_dump(mode="json", exclude_none=True, warnings=False)
    path = Path(bundle) / MANIFEST_NAME
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=4096), encoding="utf-8")
    return path
