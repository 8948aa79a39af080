"""The memory package's structure: which module may import which (no cycles, liveness blind to
tiling, tiling blind to placement and plan, schedule reading liveness only), and the constants
two modules keep apart because of that."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mcugen.memory import placement, tiling
from mcugen.memory.liveness import Buffer
from mcugen.memory.pools import DEFAULT_POOL_NAME

PACKAGE = Path(placement.__file__).parent

# Module -> the mcugen.memory modules it may import (it imports only from these in the package).
ALLOWED = {
    "liveness": set(),
    "placement": set(),
    "pools": {"liveness", "placement"},
    "tiling": {"liveness"},
    "live_totals": {"liveness", "tiling"},  # the bytes live per step of a tiling, for the search
    "tiling_search": {"liveness", "tiling", "live_totals"},
    "cost": {"tiling"},  # instructions of a tiling; blind to placement and the search
    "optimize": set(),  # --optimize's choice among figures
    "kernel_variants": {"liveness", "placement"},  # which ops run portable, from liveness alone
    "plan": {"liveness", "placement", "pools", "tiling", "tiling_search", "cost", "optimize", "kernel_variants"},
}


def _memory_imports(path: Path) -> set[str]:
    """The mcugen.memory modules a file imports, at any depth of its code."""
    found: set[str] = set()
    inside = path.parent == PACKAGE
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if inside and node.level == 1:
                found.add(module.split(".")[0])
            elif module.startswith(("memory.", "mcugen.memory.")):
                found.add(module.split(".")[-1])
    return found


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_each_module_imports_only_the_modules_below_it(name: str) -> None:
    assert _memory_imports(PACKAGE / f"{name}.py") <= ALLOWED[name]


def test_every_module_of_the_package_has_its_rule() -> None:
    assert {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"} == set(ALLOWED)


def test_placement_knows_no_op_and_no_tensor() -> None:
    tree = ast.parse((PACKAGE / "placement.py").read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]


def test_schedule_reads_liveness_only() -> None:
    assert _memory_imports(PACKAGE.parent / "schedule.py") == {"liveness"}


def test_tilings_alignment_is_the_planners() -> None:
    assert tiling.ALIGNMENT == placement.ALIGNMENT


def test_an_unplaced_buffer_is_in_the_default_pool() -> None:
    assert Buffer("b", 16, 0, 0).pool == DEFAULT_POOL_NAME
