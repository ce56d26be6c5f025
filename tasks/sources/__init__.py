"""Readers of raw perflogs, one module per tool; each exposes `read(ctx: SourceContext) -> SourceResult`."""

from __future__ import annotations

from importlib import import_module

from tasks.sources.base import SourceContext, SourceResult

READER_MODULES = {
    "access_log": "tasks.sources.access_log",
    "jtl": "tasks.sources.jtl",
    "jmeter_log": "tasks.sources.jmeter_log",
    "k6_json": "tasks.sources.k6",
    "k6_csv": "tasks.sources.k6",
    "k6_summary": "tasks.sources.k6",
    "vmstat": "tasks.sources.vmstat",
    "jstat": "tasks.sources.jstat",
    "docker_stats": "tasks.sources.docker_stats",
}


def read_source(ctx: SourceContext) -> SourceResult:
    """Hand one source to the reader of its kind."""
    kind = ctx.source.kind
    if kind not in READER_MODULES:
        raise NotImplementedError(f"{ctx.field}: no reader for kind {kind!r} yet")
    module = import_module(READER_MODULES[kind])
    reader = getattr(module, f"read_{kind}", None) or module.read
    return reader(ctx)
