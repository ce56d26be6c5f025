"""Small perflog bundles for the store tests."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

MiB = 1024 * 1024


def write_store_bundle(root: Path, run_id: str, big_mib: int = 0) -> Path:
    """A bundle folder: run.yaml, a text access log, a gzip k6 file and optionally one big binary file."""
    rng = random.Random(run_id)
    (root / "app1").mkdir(parents=True)
    (root / "loadgen").mkdir()
    (root / "run.yaml").write_text(
        f"format: 1\nrun_id: {run_id}\ncampaign: store-test\niterations: []\nsources: []\n"
    )
    lines = [f'127.0.0.1 - - [01/Dec/2026:02:00:{i % 60:02d} +0000] "GET /echo/{i} HTTP/1.1" 200 {i % 977} {i % 91}'
             for i in range(3000)]
    (root / "app1" / "access.log").write_text("\n".join(lines) + "\n")
    (root / "loadgen" / "k6.json.gz").write_bytes(gzip.compress(rng.randbytes(50_000)))
    if big_mib:
        (root / "app1" / "heap.bin").write_bytes(rng.randbytes(big_mib * MiB))
    return root
