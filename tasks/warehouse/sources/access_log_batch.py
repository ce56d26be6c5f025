"""Many small access logs read together: one read_csv over a batch of files instead of ~17 statements each.

Read one by one, a bundle of 10,000 one-line logs cost 61 ms and 16 KB a source (issue 18). The ingest
groups consecutive small sources with the same `batch_key` (tasks/warehouse/source_batches.py); one
statement reads all their files with `filename=true`, the temp table `batch_files` maps each file to its
source, and the rows are staged and placed by the models one source's rows go through, each row carrying
its source_key. `load_context` describes the batch's first source: what the models read from it (run,
resolution, pinned iteration, duration_to_ms, time_is_end) is the same for every source of the batch,
since the key holds the options and the pinned iteration.

Only files read whole and clean stay loaded: a file some of whose lines did not become rows, or with
impossible values, has its rows taken out again and is read alone by `access_log.read` (rejected lines with
their numbers, cut lines, its own error), so every result is the one-source path's.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path

from tasks.bundle.files import is_gzip
from tasks.bundle.manifest import Source
from tasks.warehouse.sources.access_log import layout_of, load_rows, publish_context, read_delimited
from tasks.warehouse.sources.access_log_regex import PRESET_REGEXES
from tasks.warehouse.sources.base import SourceContext, sources_with_bad_requests


def batch_key(source: Source, file: Path) -> Hashable | None:
    """What sources read in one statement share (kind, options, pinned iteration); None: read it alone
    (a regex, which Python matches line by line, or a gzip file)."""
    pattern = source.options.get("format") or source.options.get("preset")
    if not pattern or source.options.get("regex") or pattern in PRESET_REGEXES or is_gzip(file):
        return None
    return source.kind, json.dumps(source.options, sort_keys=True, default=str), source.iteration


def read_batch(contexts: list[SourceContext]) -> dict[int, int]:
    """Load the sources' files in one read; rows loaded per source_key of those done, the rest to read alone."""
    first, con = contexts[0], contexts[0].con
    keys = [ctx.source_key for ctx in contexts]
    con.execute("create temp table if not exists batch_files (filename varchar, source_key bigint)")
    con.execute("delete from batch_files")  # one table for the ingest: each made in its transaction stays till commit
    con.execute("insert into batch_files select unnest($files), unnest($keys)",
                {"files": [str(ctx.file) for ctx in contexts], "keys": keys})
    layout = layout_of(first)
    publish_context(first, layout)
    raw = read_delimited(con, layout, [ctx.file for ctx in contexts], False, filename=True)
    load_rows(first, raw.join(con.table("batch_files"), "filename"))
    con.execute("update sources set resolution_us = (select resolution_us from load_context) "
                "where source_key in (select source_key from batch_files)")
    counts = dict(con.execute(
        "select source_key, count(*) from request_facts where source_key in (select source_key from batch_files) "
        "group by source_key").fetchall())
    bad = sources_with_bad_requests(con, first.manifest, keys)
    # whole and clean, or read alone (a file without rows too: the one-source path has its note)
    alone = [ctx.source_key for ctx in contexts
             if ctx.source_key in bad or not 0 < counts.get(ctx.source_key, 0) == ctx.fingerprint().lines]
    if alone:
        con.execute("delete from request_facts where source_key in (select unnest($keys::bigint[]))", {"keys": alone})
    return {key: counts.get(key, 0) for key in keys if key not in alone}
