"""Text for a terminal: THE one escape every printed line passes (stdout, stderr, progress, errors, logs).

Names, labels, paths and reasons come from bundles and campaign files: an ESC or BEL in one could set the
terminal's title, clear it or move the cursor. Control characters are shown as `\\x1b`-style escapes instead
of acted on; the CLI's `echo`, the ingest's progress and the Prefect tasks' prints all go through `printable`.
"""

from __future__ import annotations

import re
import sys

# C0 and C1 control characters but tab: an ESC from a log or a label could set the terminal's title or clear it.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: str, keep_lines: bool = False) -> str:
    """Text for a terminal: control characters shown as `\\x1b`-style escapes instead of acted on
    (`keep_lines`: newlines stay, for multi-line messages)."""
    if text.isprintable():  # most text, at a fifth of the cost: no control character, newline or lone surrogate
        return text
    if keep_lines:
        return "\n".join(printable(line) for line in text.split("\n"))
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # a surrogate-escaped file name as \\udcff
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def say(text: str, err: bool = True) -> None:
    """Print a line (or lines) to stderr (`err`) or stdout, control characters escaped."""
    print(printable(str(text), keep_lines=True), file=sys.stderr if err else sys.stdout, flush=err)
