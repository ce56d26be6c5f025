"""The header a SQL model opens with: how the runner materializes it, its grain, and what it reads.

    -- Public mart: per-iteration request statistics at the host level.     (prose: any other comment)
    -- materialized: incremental                                            (view | table | incremental)
    -- unique_key: run_id                                                   (incremental only)
    -- grain: run_id, iteration, side, host -- prose may follow ' -- '
    -- upstream: int_request_stats, iterations,
    --           runs                                                       (a list ending in ',' goes on)

Fields are read from the leading comment block only. The grain is the key a test proves unique; a model
whose rows have no key (one row per logged request) says `grain: none (why)` and is not tested for one.
An incremental model without `unique_key` appends; with it, the rows of that key's value are replaced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MATERIALIZATIONS = ("view", "table", "incremental")
_FIELD = re.compile(r"^--\s*(materialized|grain|upstream|unique_key):\s*(.*)$")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_PROSE = " -- "


class ModelError(ValueError):
    """A model that cannot be built as written; the message names its file (and the other one involved)."""


@dataclass(frozen=True)
class Header:
    """What a model declares about itself."""

    materialized: str
    grain: tuple[str, ...]  # key columns; empty when the grain is not a key
    upstream: tuple[str, ...]
    unique_key: str | None = None


def parse_header(text: str, file: str) -> Header:
    """The header of a model's text; `file` names it in errors."""
    fields = _fields(text, file)
    for required in ("materialized", "grain", "upstream"):
        if required not in fields:
            raise ModelError(f"{file}: the header lacks `-- {required}: ...`")
    materialized = fields["materialized"]
    if materialized not in MATERIALIZATIONS:
        raise ModelError(f"{file}: materialized: {materialized!r}: expected one of {', '.join(MATERIALIZATIONS)}")
    unique_key = fields.get("unique_key")
    if unique_key is not None:
        if materialized != "incremental":
            raise ModelError(f"{file}: unique_key is for incremental models, not a {materialized}")
        _names(unique_key, "unique_key", file)
    return Header(materialized, _grain(fields["grain"], file), _names(fields["upstream"], "upstream", file), unique_key)


def _fields(text: str, file: str) -> dict[str, str]:
    """Field values of the leading comment block, lists joined across lines, prose after ' -- ' cut off."""
    fields: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        match = _FIELD.match(line)
        if match:
            last, value = match.groups()
            if last in fields:
                raise ModelError(f"{file}: `{last}` is given twice")
            fields[last] = value.split(_PROSE)[0].strip()
        elif last and fields[last].endswith(","):
            fields[last] += " " + line[2:].split(_PROSE)[0].strip()
        else:
            last = None
    return fields


def _grain(value: str, file: str) -> tuple[str, ...]:
    if value == "none" or value.startswith("none "):
        return ()
    return _names(value, "grain", file)


def _names(value: str, field: str, file: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in value.split(","))
    for name in names:
        if not _NAME.match(name):
            raise ModelError(f"{file}: {field}: {name!r} is not a name (expected `{field}: a, b`"
                             + (" or `grain: none (why)`)" if field == "grain" else ")"))
    return names
