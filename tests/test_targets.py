"""Targets as values, and the layers above the pipeline.

One Target per --target name carries what used to be read from the name in several places;
the lookup names the valid targets; BuildOptions keeps its cache key (the name). The
toolchain sits above the driver and below analysis: the import graph checks that, functions'
own imports included, and that the firmware app.mk ships inside the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mcugen.driver import BuildOptions
from mcugen.errors import McugenError
from mcugen.quantization import Rounding
from mcugen.targets import TARGET_NAMES, TARGETS, target
from mcugen.toolchain.cross import FIRMWARE_COMMON

PACKAGE = Path(__file__).resolve().parents[1] / "mcugen"


def test_every_name_looks_up_its_target() -> None:
    assert TARGET_NAMES == ("host", "cortex-m4", "cortex-m7", "cortex-m55")
    for name in TARGET_NAMES:
        assert target(name).name == name and target(name) is TARGETS[name]


def test_an_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(McugenError, match="'cortex-m3' is not one of host, cortex-m4, cortex-m7, cortex-m55"):
        target("cortex-m3")
    with pytest.raises(McugenError, match="not one of"):
        BuildOptions(target="m4")  # type: ignore[arg-type]


def test_features_decide_fast_paths_flags_and_boards() -> None:
    host, m4, m7, m55 = (target(n) for n in TARGET_NAMES)
    assert [t.fast_path for t in (host, m4, m7, m55)] == [None, "dsp", "dsp", "mve"]
    assert [t.plans_fast_path_scratch for t in (host, m4, m7, m55)] == [False, True, True, True]
    assert not host.is_cross and host.core_flags == () and host.qemu is None and host.clock_mhz is None
    for core in (m4, m7, m55):
        assert core.is_cross and f"-mcpu={core.name}" in core.core_flags and core.clock_mhz == 100.0
    assert m4.qemu is not None and (m4.qemu.machine, m4.qemu.cpu) == ("mps2-an386", "cortex-m4")
    assert m55.qemu is not None and (m55.qemu.machine, m55.qemu.cpu) == ("mps3-an547", "cortex-m55")
    assert m7.qemu is None
    assert all(t.npu is None for t in TARGETS.values())  # the slot --npu will fill


def test_build_options_take_a_target_and_keep_their_cache_key() -> None:
    by_value = BuildOptions(rounding=Rounding.LITERT, prefix="p", target=target("cortex-m55"))
    by_name = BuildOptions(rounding=Rounding.LITERT, prefix="p", target="cortex-m55")  # type: ignore[arg-type]
    assert by_value == by_name and by_value.target is target("cortex-m55")
    assert by_value.key() == "litert-p-cortex-m55--0"
    assert BuildOptions().key() == "tflm--host--0"


def _imports(path: Path) -> set[str]:
    """Every mcugen module `path` imports, at module level or inside functions."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            name = ".".join(filter(None, [base, node.module]))
            found |= {name} | {f"{name}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.startswith("mcugen")}


def _layer_imports(layer: str) -> set[str]:
    paths = [PACKAGE / f"{layer}.py"] if (PACKAGE / f"{layer}.py").exists() else \
        sorted((PACKAGE / layer).glob("*.py"))
    return set().union(*(_imports(p) for p in paths))


def test_layers_point_down() -> None:
    """cli -> analysis -> toolchain -> driver -> stages: nothing imports a layer above it."""
    def reaches(layer: str, above: str) -> set[str]:
        return {name for name in _layer_imports(layer) if name.startswith(f"mcugen.{above}")}

    assert not reaches("driver", "toolchain") and not reaches("driver", "cli")
    assert not reaches("driver", "analysis.profile") and not reaches("driver", "analysis.measure")
    assert not reaches("toolchain", "analysis") and not reaches("toolchain", "cli")
    assert not reaches("analysis", "cli")
    assert not reaches("targets", "driver") and not reaches("targets", "toolchain")


def test_firmware_ships_inside_the_package() -> None:
    assert FIRMWARE_COMMON == PACKAGE / "firmware"
    for name in ("app.mk", "main.c", "startup.c", "semihosting.c", "profile_clock.c", "npz_to_header.py",
                 "mps2_an386.ld", "mps3_an547.ld", "sections.ld"):
        assert (FIRMWARE_COMMON / name).is_file(), name
    pyproject = (PACKAGE.parent / "pyproject.toml").read_text()
    assert '"firmware/*"' in pyproject and '"templates/**/*"' in pyproject
