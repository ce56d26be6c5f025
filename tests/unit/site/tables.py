"""Read a site page back: its tables as rows of cell texts, its links and its SVG drawings (html.parser, no
code of tasks/site)."""

from __future__ import annotations

from html.parser import HTMLParser


class PageReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.hrefs: list[str] = []
        self.svgs: list[dict] = []  # per <svg>: its class and the number of circles and polylines inside
        self.code: list[str] = []
        self._cell: list[str] | None = None
        self._in_code = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a" and "href" in attrs:
            self.hrefs.append(attrs["href"])
        elif tag == "svg":
            self.svgs.append({"class": attrs.get("class"), "circle": 0, "polyline": 0, "change": 0, "text": []})
        elif tag in ("circle", "polyline") and self.svgs:
            self.svgs[-1][tag] += 1
        elif tag == "line" and attrs.get("class") == "change":
            self.svgs[-1]["change"] += 1
        elif tag == "code":
            self._in_code = True
            self.code.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "code":
            self._in_code = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._in_code:
            self.code[-1] += data
        if self.svgs and self.lasttag == "text":
            self.svgs[-1]["text"].append(data)


def read_page(text: str) -> PageReader:
    reader = PageReader()
    reader.feed(text)
    return reader


def as_dicts(table: list[list[str]]) -> list[dict[str, str]]:
    """A table's body rows keyed by its header."""
    header, *body = table
    return [dict(zip(header, row)) for row in body]
