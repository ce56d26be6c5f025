"""Streaming parser of XML JTL files (`<testResults>`): top-level samples become raw request rows.

Every child of `<testResults>` is a sample whatever its element name (`httpSample`, `sample`, or a plugin's
class such as `com.googlecode.jmeter.plugins.webdriver.sampler.SampleResultWithSubs`). Samples nested
inside one (embedded resources, transaction children) are counted, not loaded: the top-level sample
already holds their time. A sample carries its fields as attributes (`t ts s lb rc by`), or, when
JMeter's XStream serialised a class it does not know, as child elements (`startTime`, `elapsedTime`,
`label`, `responseCode`, `success`, `bytes`).

expat is driven directly (it is what `xml.etree.iterparse` runs on) so that nothing but the few fields
we need is ever built (response data can be megabytes) and every sample knows its line. A file cut by a
crash keeps its complete samples; the break becomes one rejected line, and so does every top-level
element found after it.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

import numpy as np
import pandas as pd

from tasks.bundle.files import is_gzip, open_text
from tasks.warehouse.sources.base import Rejects

BATCH_ROWS = 250_000
XSTREAM_FIELDS = frozenset(
    {"startTime", "timeStamp", "elapsedTime", "endTime", "label", "responseCode", "success", "bytes"}
)
TOP_LEVEL_START = re.compile(r"^<(?![/?!])")  # JMeter writes top-level elements at column 0, nested ones indented
PARTIAL_START = re.compile(r"<[A-Za-z_]")
EXCERPT_BYTES = 200
BOOLEANS = {"true": True, "false": False}


@dataclass
class XmlOutcome:
    """What the parse found besides the rows it handed over."""

    root: str | None = None
    samples: int = 0
    subsamples: int = 0
    not_samples: int = 0
    unclosed_root: bool = False
    rejects: Rejects = field(default_factory=Rejects)  # counted; the first REJECTS_KEPT kept


class _SampleParser:
    """expat callbacks: collect top-level samples column by column, hand them over in batches."""

    def __init__(self, on_batch: Callable[[pd.DataFrame], None], batch_rows: int) -> None:
        self.on_batch, self.batch_rows = on_batch, batch_rows
        self.outcome = XmlOutcome()
        self.expat = expat.ParserCreate()
        self.expat.buffer_text = True
        self.expat.StartElementHandler = self.start
        self.expat.EndElementHandler = self.end
        self.expat.CharacterDataHandler = self.text
        self.depth = 0
        self.current: dict[str, str] | None = None
        self.current_name = ""
        self.current_line = 0
        self.xstream = False
        self.capture: str | None = None
        self.buffer: list[str] = []
        self._reset_columns()

    def _reset_columns(self) -> None:
        self.ts: list[int] = []
        self.elapsed: list[int] = []
        self.label: list[str | None] = []
        self.code: list[str | None] = []
        self.success: list[bool | None] = []
        self.bytes: list[int | None] = []

    def start(self, name: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if self.depth == 1:
            self.outcome.root = name
        elif self.depth == 2:
            self.current, self.current_name = dict(attrs), name
            self.current_line = self.expat.CurrentLineNumber
            self.xstream = "t" not in attrs and "ts" not in attrs
        elif self.depth == 3 and self.xstream and name in XSTREAM_FIELDS:
            self.capture, self.buffer = name, []
        elif "ts" in attrs:
            self.outcome.subsamples += 1

    def text(self, data: str) -> None:
        if self.capture:
            self.buffer.append(data)

    def end(self, name: str) -> None:
        if self.capture and self.depth == 3:
            self.current[self.capture] = "".join(self.buffer).strip()
            self.capture = None
        elif self.depth == 2:
            self._finish_sample()
            self.current = None
        self.depth -= 1

    def _fields(self) -> tuple[str | None, ...] | None:
        """(ts, t, label, code, success, bytes) of the sample just closed; None when it is no sample."""
        c = self.current
        if not self.xstream:
            return c.get("ts"), c.get("t"), c.get("lb"), c.get("rc"), c.get("s"), c.get("by")
        if "startTime" not in c and "timeStamp" not in c:
            return None
        start = c.get("startTime") if c.get("startTime", "0") != "0" else c.get("timeStamp")
        elapsed = c.get("elapsedTime")
        if elapsed in (None, "0") and c.get("endTime", "0") != "0" and (start or "").isdigit():
            elapsed = str(int(c["endTime"]) - int(start))
        return start, elapsed, c.get("label"), c.get("responseCode"), c.get("success"), c.get("bytes")

    def _finish_sample(self) -> None:
        fields = self._fields()
        if fields is None:
            self.outcome.not_samples += 1
            return
        ts, t, label, code, success, size = fields
        try:
            start_ms, elapsed_ms = int(ts), int(t)
        except (TypeError, ValueError):
            excerpt = f"<{self.current_name} ts={ts!r} t={t!r} lb={label!r}>"
            self.outcome.rejects.append((self.current_line, "sample without a whole-number ts or t", excerpt))
            return
        self.ts.append(start_ms)
        self.elapsed.append(elapsed_ms)
        self.label.append(label)
        self.code.append(code)
        self.success.append(BOOLEANS.get((success or "").lower()))
        self.bytes.append(int(size) if size and size.lstrip("-").isdigit() else None)
        self.outcome.samples += 1
        if len(self.ts) >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        if not self.ts:
            return
        frame = pd.DataFrame(
            {
                "timeStamp": np.array(self.ts, dtype=np.int64),
                "elapsed": np.array(self.elapsed, dtype=np.int64),
                "label": pd.Series(self.label, dtype=object),
                "responseCode": pd.Series(self.code, dtype=object),
                "success": pd.Series(self.success, dtype="boolean"),
                "bytes": pd.Series(self.bytes, dtype="Int64"),
            }
        )
        self._reset_columns()
        self.on_batch(frame)


def parse(path: Path, on_batch: Callable[[pd.DataFrame], None], batch_rows: int = BATCH_ROWS) -> XmlOutcome:
    """Stream the samples of an XML JTL to `on_batch` (frames of raw_jtl columns); return what else was seen."""
    parser = _SampleParser(on_batch, batch_rows)
    opener = gzip.open if is_gzip(path) else open
    with opener(path, "rb") as handle:
        try:
            while chunk := handle.read(1 << 20):
                parser.expat.Parse(chunk, False)
            parser.expat.Parse(b"", True)
        except expat.ExpatError as exc:
            _reject_break(path, parser, exc)
    parser.flush()
    return parser.outcome


def _reject_break(path: Path, parser: _SampleParser, exc: expat.ExpatError) -> None:
    """Where the XML breaks: keep what came before; the break and each top-level element after it are rejected."""
    opener = gzip.open if is_gzip(path) else open
    with opener(path, "rb") as handle:
        handle.seek(parser.expat.ErrorByteIndex)
        unread = handle.read(EXCERPT_BYTES).decode("utf-8", errors="replace")
    lost, broken_line = [], ""
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if number == exc.lineno:
                broken_line = line.rstrip("\r\n")
            elif number > exc.lineno and TOP_LEVEL_START.match(line):
                lost.append((number, "element after the point where the XML breaks: not read", line.rstrip("\r\n")))
    partial_start = PARTIAL_START.match(unread)
    if parser.current is None and parser.depth <= 1 and not partial_start and not lost:
        # Only (part of) the closing </testResults> is missing: JMeter was stopped, every sample is complete.
        parser.outcome.unclosed_root = True
        return
    reason = f"XML breaks here ({expat.ErrorString(exc.code)}, column {exc.offset})"
    if parser.current is not None:
        reason += f": the <{parser.current_name}> sample begun at line {parser.current_line} is incomplete"
    elif partial_start:
        reason += ": a sample is cut inside its start tag"
    parser.outcome.rejects.append((exc.lineno, reason, unread.split("\n", 1)[0] or broken_line))
    for item in lost:
        parser.outcome.rejects.append(item)
