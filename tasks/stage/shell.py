"""The one way a value reaches a shell command, here or on a host: quoted, so it stays one word.

Every path, name, binary, pid and variable that goes into a command line passes through `quote` (one value)
or `join` (a whole argv); a campaign's own shell snippets (`run`, `command`, `pid_command`) are the only
unquoted text, and `render` fills the `{{placeholders}}` inside them once, each value quoted: at load for
provision, teardown and monitors (tasks/campaign/spec.py), per step for hooks (tasks/stage/hooks.py).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping


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


# `{{name}}`, `{{step.KEY}}`: the only placeholder syntax of campaign files
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\s*\}\}")


def placeholders(template: str) -> list[str]:
    """The names a template reads, in order (`step.adapters`, `iteration`, `run_dir`)."""
    return [match.group(1) for match in PLACEHOLDER.finditer(template)]


def render(template: str, values: Mapping[str, object], shell: bool) -> str:
    """`template` with every placeholder replaced by its value, in one pass over the template only.

    In a shell snippet (`shell`) each value becomes one quoted word; elsewhere it goes in as it is. A value is
    data: a `{{...}}` inside one is never read as a placeholder, and nothing is rendered or quoted twice
    (a value quoted into a template that a second pass then filled would let the second value out of its
    quotes). An unknown name raises KeyError with the name.
    """
    def value(match: re.Match) -> str:
        found = values[match.group(1)]
        return quote(found) if shell else str(found)

    return PLACEHOLDER.sub(value, template)
