"""The one way a value reaches a shell command, here or on a host: quoted, so it stays one word.

Every path, name, binary, pid and variable that goes into a command line passes through `quote` (one value)
or `join` (a whole argv); a campaign's own shell snippets (`run`, `command`, `pid_command`) are the only
unquoted text, and the `{{placeholders}}` inside them expand quoted too (tasks/campaign/spec.py).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable


class UnsafeValue(ValueError):
    """A value no quoting can pass to a shell (a NUL byte ends a C string: the rest would be lost)."""


def quote(value: object) -> str:
    """`value` as one shell word: `'/x/victim stage'`, `'$(touch M)'`; plain words stay as they are."""
    text = str(value)
    if "\x00" in text:
        raise UnsafeValue(f"a NUL byte cannot be passed to a shell command: {text[:80]!r}")
    return shlex.quote(text)


def join(parts: Iterable[object]) -> str:
    """An argv as one command line, every part quoted."""
    return " ".join(quote(part) for part in parts)
