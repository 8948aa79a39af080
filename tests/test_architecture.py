"""The package's shape: no import cycle (imports inside functions count), no oversized module."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "mcugen"
MAX_MODULE_LINES = 800


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The mcugen modules `path` imports anywhere in its body, resolved to module names."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {module for module in found if module in modules and module != name}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(path) for path in paths}
    return {_module_name(path): _imports(path, modules) for path in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules, or None (depth-first search, three colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        stack.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == 1:
                return stack[stack.index(imported):] + [imported]
            if imported not in state and (cycle := visit(imported)):
                return cycle
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_is_oversized() -> None:
    sizes = {path.relative_to(REPO): len(path.read_text().splitlines()) for path in PACKAGE.rglob("*.py")}
    assert not {path: n for path, n in sizes.items() if n > MAX_MODULE_LINES}


def test_every_package_has_an_init() -> None:
    """setuptools' package finder skips a directory without __init__.py: an installed mcugen
    would lack it (mcugen/ops once had none and worked only from the source tree). The
    symlinked data directories (templates, firmware) ship as package data instead."""
    data = [path for path in PACKAGE.iterdir() if path.is_symlink()]
    missing = [path.relative_to(REPO) for path in PACKAGE.rglob("*")
               if path.is_dir() and path.name != "__pycache__" and any(path.glob("*.py"))
               and not (path / "__init__.py").exists()
               and not any(path == link or link in path.parents for link in data)]
    assert not missing
