"""The project's import graph, read from the source (ast), for the architecture tests."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOP = ("tasks", "flows")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of tasks/ and flows/ by its dotted name."""
    return {module_name(path): path for top in TOP for path in sorted((ROOT / top).rglob("*.py"))}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The project modules a file imports anywhere in it (inside functions too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def graph() -> dict[str, set[str]]:
    """module -> the project modules it imports (a package's __init__ does not count as its children's)."""
    found = modules()
    return {name: imports_of(path, set(found)) - {name} for name, path in found.items()}


def package_of(module: str) -> str:
    """`tasks.warehouse.sources.k6` -> `warehouse`; `flows.campaign` -> `flows`; `tasks.settings` -> `settings`."""
    parts = module.split(".")
    return parts[0] if parts[0] == "flows" else parts[1] if len(parts) > 1 else parts[0]
