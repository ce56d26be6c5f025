"""The docs that say what the code has, checked against it: source kinds, grains, Prefect task names, how-to paths.

A fact written in the docs and in the code drifts unless a test reads both: a new source kind without its
section in docs/bundle-format.md, a grain changed in a model's header and not in docs/warehouse.md, a task
renamed and not in the UI list of docs/architecture.md, a how-to naming a file that moved.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from prefect import Task

from tasks.bundle.kinds import KINDS
from tasks.warehouse.models import load_models

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
# docs/warehouse.md and the pages it sends its tables to
TABLE_DOCS = ("warehouse.md", "warehouse-host-metrics.md", "report.md", "history.md")
_HEADING = re.compile(r"^#{2,4} (?P<names>(?:`\w+`(?:, )?)+)(?P<rest>.*)$", re.MULTILINE)
_ROW_PER = re.compile(r"one row per (?:\((?P<key>[\w, ]+)\)|(?P<word>\w+))")


def _section(text: str, title: str) -> str:
    """The text under the heading `title` up to the next heading of the same level."""
    match = re.search(rf"^(#+) {re.escape(title)}\s*$", text, re.MULTILINE)
    assert match, f"no heading {title!r}"
    level = len(match.group(1))
    end = re.search(rf"^#{{1,{level}}} ", text[match.end():], re.MULTILINE)
    return text[match.end(): match.end() + end.start() if end else len(text)]


def _headings(*files: str) -> dict[str, str]:
    """Each table or kind named in backquotes by a heading, with the rest of its heading."""
    found: dict[str, str] = {}
    for name in files:
        for match in _HEADING.finditer((DOCS / name).read_text(encoding="utf-8")):
            for each in re.findall(r"`(\w+)`", match.group("names")):
                found.setdefault(each, match.group("rest"))
    return found


def _source_tests() -> list[Path]:
    return sorted(path for path in (ROOT / "tests" / "unit").rglob("test_*.py") if "sources" in path.parts)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_source_kind_has_its_section_and_a_reader_test(kind):
    sources = _section((DOCS / "bundle-format.md").read_text(encoding="utf-8"), "Sources")
    assert re.search(rf"^###.*`{kind}`", sources, re.MULTILINE), \
        f"docs/bundle-format.md: no `### ... `{kind}`` section under ## Sources"
    reader = KINDS[kind].reader
    assert (ROOT / "tasks" / "warehouse" / "sources" / f"{reader}.py").is_file(), f"{kind}: no reader {reader}.py"
    tests = [path for path in _source_tests()
             if path.name == f"test_{reader}.py" or f'"kind": "{kind}"' in path.read_text(encoding="utf-8")]
    assert tests, f"{kind}: no tests/unit/.../sources/test_{reader}.py nor a sources test with a {kind} source"


def _documented_models() -> list[str]:
    headings = _headings(*TABLE_DOCS)
    return sorted(name for name, model in load_models().items()
                  if model.layer == "marts" or (model.layer == "base" and name in headings))


@pytest.mark.parametrize("name", _documented_models())
def test_every_public_tables_documented_grain_is_its_headers(name):
    heading = _headings(*TABLE_DOCS).get(name)
    assert heading is not None, f"{name}: no `### `{name}` — one row per ...` heading in docs/{', '.join(TABLE_DOCS)}"
    said = _ROW_PER.search(heading)
    assert said, f"{name}: its heading says no `one row per ...`: {heading!r}"
    grain = load_models()[name].header.grain
    documented = tuple(part.strip() for part in said.group("key").split(",")) if said.group("key") else ()
    if not grain:  # `grain: none (why)`: the docs name what a row is, not a key
        assert said.group("word"), f"{name}: the header's grain is none, the docs give a key {documented}"
    elif said.group("word") and len(grain) == 1:
        assert (said.group("word"),) == grain, f"{name}: docs say one row per {said.group('word')}, header {grain}"
    else:
        assert documented == grain, f"{name}: docs say one row per {documented}, its header's grain is {grain}"


def _prefect_task_run_names() -> set[str]:
    """The run names of every Prefect task of tasks/ (as the UI shows them; `{index}` stays a placeholder)."""
    names = set()
    for path in sorted((ROOT / "tasks").rglob("*.py")):
        if "@task(" not in path.read_text(encoding="utf-8"):
            continue
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for value in vars(module).values():
            if isinstance(value, Task):
                names.add(value.task_run_name if isinstance(value.task_run_name, str) else value.name)
    return names


def test_every_prefect_task_is_in_the_documented_ui_list():
    text = _section((DOCS / "architecture.md").read_text(encoding="utf-8"), "A campaign in the Prefect UI")
    listed = set(re.findall(r"`([\w{}-]+)`", text))
    names = _prefect_task_run_names()
    assert len(names) >= 13, names
    missing = {name for name in names if name.replace("{index}", "1") not in listed}
    assert not missing, f"docs/architecture.md, A campaign in the Prefect UI: no {sorted(missing)}"


_PATH = re.compile(r"`((?:tasks|sql|tests|docs|infra|flows|expectations|bench|campaigns)/[\w<>./-]*)`")


def test_the_how_to_lists_name_files_that_exist():
    """Every path a how-to of docs/architecture.md names exists; `<name>` stands for any name."""
    text = _section((DOCS / "architecture.md").read_text(encoding="utf-8"), "How to add …")
    paths = sorted(set(_PATH.findall(text)))
    assert len(paths) >= 20, paths
    missing = [path for path in paths if not list(ROOT.glob(re.sub(r"<\w+>", "*", path).rstrip("/")))]
    assert not missing, f"docs/architecture.md, How to add: no such file {missing}"
