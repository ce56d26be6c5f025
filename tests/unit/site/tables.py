"""Read a site page back: its tables as rows of cell texts, its links and its SVG drawings (html.parser, no
code of tasks/site)."""

from __future__ import annotations

from html.parser import HTMLParser


class PageReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.hrefs: list[str] = []
        self.svgs: list[dict] = []  # per <svg>: its class, the number of circles and polylines inside, its texts,
        # its points (each circle's fill, x and hover text), its levels (horizontal dashed lines), its marks (each
        # change line's x and colour, each outlier cross's path and hover text) and its texts' x and colour
        self.code: list[str] = []
        self._cell: list[str] | None = None
        self._in_code = False
        self._point: dict | None = None

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
            self.svgs.append({"class": attrs.get("class"), "circle": 0, "polyline": 0, "change": 0, "text": [],
                              "points": [], "level": 0, "marks": [], "crosses": [], "labels": []})
        elif tag in ("circle", "polyline") and self.svgs:
            self.svgs[-1][tag] += 1
            if tag == "circle":
                self._point = {"fill": attrs.get("fill"), "x": float(attrs["cx"]), "tip": ""}
                self.svgs[-1]["points"].append(self._point)
        elif tag == "line" and attrs.get("class") in ("change", "level"):
            self.svgs[-1][attrs["class"]] += 1
            if attrs["class"] == "change":
                self.svgs[-1]["marks"].append({"x": float(attrs["x1"]), "stroke": attrs["stroke"]})
        elif tag == "path" and attrs.get("class") == "outlier":
            self._point = {"d": attrs["d"], "tip": ""}
            self.svgs[-1]["crosses"].append(self._point)
        elif tag == "text" and self.svgs:
            self.svgs[-1]["labels"].append({"x": float(attrs["x"]), "fill": attrs.get("fill"), "text": ""})
        elif tag == "code":
            self._in_code = True
            self.code.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "code":
            self._in_code = False
        elif tag in ("circle", "path"):
            self._point = None

    def handle_data(self, data):
        if self._point is not None and self.lasttag == "title":
            self._point["tip"] += data
        if self._cell is not None:
            self._cell.append(data)
        if self._in_code:
            self.code[-1] += data
        if self.svgs and self.lasttag == "text":
            self.svgs[-1]["text"].append(data)
            self.svgs[-1]["labels"][-1]["text"] += data


def read_page(text: str) -> PageReader:
    reader = PageReader()
    reader.feed(text)
    return reader


def as_dicts(table: list[list[str]]) -> list[dict[str, str]]:
    """A table's body rows keyed by its header."""
    header, *body = table
    return [dict(zip(header, row)) for row in body]


def shown_value(text: str) -> float:
    """A figure as a page writes it, as a number: '1,234.5' -> 1234.5, a rate '1.25 %' -> 0.0125."""
    if text.endswith(" %"):
        return float(text[:-2].replace(",", "")) / 100
    return float(text.replace(",", ""))
