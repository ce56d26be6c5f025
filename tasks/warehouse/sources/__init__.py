"""Readers of raw perflogs, one module per tool; each exposes `read_<kind>(ctx)` or `read(ctx) -> SourceResult`."""

from __future__ import annotations

from collections.abc import Hashable
from importlib import import_module
from pathlib import Path

from tasks.bundle.kinds import KINDS
from tasks.bundle.manifest import Source
from tasks.warehouse.sources.base import SourceContext, SourceResult

# Lines a reader wants found by the fingerprint pass (tasks/bundle/files.py), by kind: k6 writes a
# `"type":"Metric"` line for each metric it emits, so its reader knows what a second pass would find.
FINGERPRINT_MARKERS = {"k6_json": b'"Metric"'}
# Kinds whose small sources are read many files a statement (tasks/warehouse/source_batches.py), by the module
# that does it: `batch_key(source, file)` says which sources go together, `read_batch(contexts)` reads them.
BATCH_READERS = {"access_log": "access_log_batch"}


def read_source(ctx: SourceContext) -> SourceResult:
    """Hand one source to the reader its kind names in the registry (tasks/bundle/kinds.py)."""
    kind = ctx.source.kind
    module = import_module(f"{__name__}.{KINDS[kind].reader}")
    reader = getattr(module, f"read_{kind}", None) or module.read
    return reader(ctx)


def batch_key(source: Source, file: Path) -> Hashable | None:
    """What the sources read in one statement with this one share; None: it is read alone."""
    module = BATCH_READERS.get(source.kind)
    return None if module is None else import_module(f"{__name__}.{module}").batch_key(source, file)


def read_batch(contexts: list[SourceContext]) -> dict[int, int]:
    """Read sources of one batch_key together: rows loaded per source_key of those done; the others are
    left to `read_source`."""
    return import_module(f"{__name__}.{BATCH_READERS[contexts[0].source.kind]}").read_batch(contexts)
