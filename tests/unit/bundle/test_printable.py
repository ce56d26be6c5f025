"""`printable` against the rule it states, for every code point of the Basic Multilingual Plane and beyond."""

from __future__ import annotations

import sys

from tasks.bundle.printable import printable

CONTROLS = {*range(0x00, 0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0)}  # C0 and C1 but tab


def _expected(code: int) -> str:
    if code in CONTROLS:
        return {0x0A: "\\n", 0x0D: "\\r"}.get(code, f"\\x{code:02x}")  # as Python's unicode_escape writes them
    if 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"  # a lone surrogate (a file name's undecodable byte) as backslashreplace writes it
    return chr(code)


def test_each_code_point_is_kept_or_escaped_as_the_rule_says():
    codes = [*range(0x0, 0x3000), *range(0xD7F0, 0xE010), 0xFEFF, 0xFFFD, 0x1F600, sys.maxunicode]
    wrong = [(hex(code), printable(chr(code))) for code in codes if printable(chr(code)) != _expected(code)]
    assert wrong == []


def test_escapes_inside_text_and_lines_kept_when_asked():
    assert printable("a\x1b]0;x\x07b\té") == "a\\x1b]0;x\\x07b\té"
    assert printable("one\ntwo\x1b", keep_lines=True) == "one\ntwo\\x1b"
    assert printable("one\ntwo") == "one\\ntwo"
    assert printable("name\udcff.log\xa0") == "name\\udcff.log\xa0"  # no-break space: not a control character
