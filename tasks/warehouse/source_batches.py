"""Which sources of a bundle are read together, and their rows of `sources` written in one statement.

Read one by one, each source costs its own ~17 statements (61 ms and 16 KB in a bundle of 10,000 one-line
access logs, issue 18). Consecutive small sources whose reader reads many files in one statement
(sources.BATCH_READERS) and that share its `batch_key` go into batches of at most BATCH_FILES files; every
other source is a batch of one, read alone.
"""

from __future__ import annotations

from collections.abc import Hashable

import duckdb

from tasks.warehouse.sources import batch_key
from tasks.warehouse.sources.base import SourceContext

SMALL_SOURCE_BYTES = 1 << 20  # a source file below this is read on one thread, and may be read in a batch
BATCH_FILES = 1000  # files of one read_csv: more buys little (the statements are shared) and holds more rows


def plan(contexts: list[SourceContext], sizes: list[int]) -> list[list[SourceContext]]:
    """The sources in manifest order, cut into batches: runs of consecutive small sources of one batch key."""
    batches: list[list[SourceContext]] = []
    last: Hashable | None = None
    for ctx, size in zip(contexts, sizes):
        key = batch_key(ctx.source, ctx.file) if 0 < size < SMALL_SOURCE_BYTES else None
        if key is None or key != last or len(batches[-1]) >= BATCH_FILES:
            batches.append([ctx])
        else:
            batches[-1].append(ctx)
        last = key
    return batches


def insert_sources(con: duckdb.DuckDBPyConnection, contexts: list[SourceContext], sizes: list[int]) -> None:
    """The sources' rows of `sources` (counts 0, resolution and sha256 not yet known), in one statement."""
    sources = [ctx.source for ctx in contexts]
    con.execute(
        "insert into sources by name select unnest($keys) as source_key, $run_id as run_id, unnest($kinds) as kind, "
        "unnest($hosts) as host, unnest($roles) as role, unnest($sides) as side, unnest($paths) as path, "
        "unnest($pinned::integer[]) as pinned_iteration, unnest($sizes::bigint[]) as size_bytes, 0 as rows_loaded, "
        "0 as rows_rejected, unnest($background::varchar[][]) as background_labels",
        {
            "keys": [ctx.source_key for ctx in contexts],
            "run_id": contexts[0].manifest.run_id,
            "kinds": [source.kind for source in sources],
            "hosts": [source.host for source in sources],
            "roles": [source.default_role for source in sources],
            "sides": [source.side for source in sources],
            "paths": [source.path for source in sources],
            "pinned": [source.iteration for source in sources],
            "sizes": [sizes[ctx.number] for ctx in contexts],
            "background": [source.background_labels for source in sources],
        },
    )
