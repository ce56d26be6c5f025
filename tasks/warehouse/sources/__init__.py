"""Readers of raw perflogs, one module per tool; each exposes `read_<kind>(ctx)` or `read(ctx) -> SourceResult`."""

from __future__ import annotations

from importlib import import_module

from tasks.bundle.kinds import KINDS
from tasks.warehouse.sources.base import SourceContext, SourceResult

# Lines a reader wants found by the fingerprint pass (tasks/bundle/files.py), by kind: k6 writes a
# `"type":"Metric"` line for each metric it emits, so its reader knows what a second pass would find.
FINGERPRINT_MARKERS = {"k6_json": b'"Metric"'}


def read_source(ctx: SourceContext) -> SourceResult:
    """Hand one source to the reader its kind names in the registry (tasks/bundle/kinds.py)."""
    kind = ctx.source.kind
    module = import_module(f"{__name__}.{KINDS[kind].reader}")
    reader = getattr(module, f"read_{kind}", None) or module.read
    return reader(ctx)
