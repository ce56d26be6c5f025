"""The road stays visible: no import circles, each package imports only what its docstring allows."""

from __future__ import annotations

import ast
import re

import pytest

from tests.unit.architecture.imports import ROOT, graph, modules, package_of


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_a_circle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circles_among_the_project_modules():
    assert _cycles(graph()) == []


def _allowed() -> dict[str, set[str]]:
    """Per package, the packages its `__init__` docstring says it may import (`May import: a, b`)."""
    allowed = {}
    for name, path in modules().items():
        if path.name != "__init__.py" or name not in ("flows", f"tasks.{package_of(name)}"):
            continue  # a package of tasks/ (or flows/) says it; sub-packages follow their package
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        line = re.search(r"^May import: (.*)$", doc, re.M)
        assert line, f"{path}: the docstring does not say what the package may import (`May import: ...`)"
        allowed[package_of(name)] = set(re.findall(r"\b(bundle|stage|loadtools|campaign|store|warehouse|validate|"
                                                    r"report|history|site|cli|flows|settings)\b", line.group(1)))
        if "every package" in line.group(1):
            allowed[package_of(name)] |= {"bundle", "stage", "loadtools", "campaign", "store", "warehouse",
                                         "validate", "report", "history", "site", "settings"}
    return allowed


def test_each_package_imports_only_what_it_says_it_may():
    allowed = _allowed()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        for target in targets
        if package_of(target) != package_of(module) and package_of(module) != "settings"
        and package_of(target) not in allowed.get(package_of(module), set())
    )
    assert wrong == []


@pytest.mark.parametrize("name", sorted(n for n, p in modules().items() if p.name != "__init__.py"))
def test_imports_inside_functions_say_why(name):
    """Only a heavy dependency is imported inside a function, and the line says so."""
    path = modules()[name]
    lines = path.read_text().splitlines()
    for function in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("tasks", "flows"):
                assert "# heavy" in lines[node.lineno - 1], f"{path.relative_to(ROOT)}:{node.lineno}: move it to the top"
