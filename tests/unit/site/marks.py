"""The change points drawn on a site chart, read back from the SVG that tests/unit/site/tables.py parsed: each
line or cross placed at a run's point, with its text."""

from __future__ import annotations

import re

from tasks.site.svg import ORANGE, RED


def shown_marks(chart: dict) -> dict[tuple[str, str], str]:
    """{(run, kind): the text of the run's mark} read from the SVG: lines and crosses placed at a run's point."""
    runs = {point["x"]: point["tip"].split(": ")[0] for point in chart["points"]}
    labels = [t for t in chart["labels"] if t["fill"] in (RED, ORANGE) and not t["text"].startswith("threshold")]
    out = {}
    for mark in chart["marks"]:
        text = [t["text"] for t in labels if abs(t["x"] - mark["x"]) <= 3.5]
        out[(runs[mark["x"]], {RED: "change", ORANGE: "pending"}[mark["stroke"]])] = text[0] if text else ""
    for cross in chart["crosses"]:
        at = float(cross["d"][1:].split(",")[0]) + 4
        (run,) = [r for x, r in runs.items() if abs(x - at) < 0.11]
        out[(run, "outlier")] = cross["tip"]
    return out


def iterations_in(text: str) -> list[int]:
    """'it 1-3' and 'it 1, 3' of a mark's text, as iteration numbers."""
    out = []
    for part in re.findall(r"it ([\d, -]+?)(?:;|$| [a-z])", text):
        for item in part.split(", "):
            low, _, high = item.partition("-")
            out.extend(range(int(low), int(high or low) + 1))
    return sorted(out)
