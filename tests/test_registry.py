"""The op registry: every op kind has one complete definition, and its facts agree with TFLite."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import tflite

from mcugen.driver import load_graph
from mcugen.ir import OpKind
from mcugen.ops import registry

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT.parent / "shared" / "models" / "kws_dscnn.tflite"

PARTS = ("read_options", "prepare", "emit", "scratch", "fast_path_scratch", "reference", "macs")


def test_every_kind_has_a_complete_definition() -> None:
    defined = {definition.kind for definition in registry.definitions()}
    assert defined == set(OpKind)
    for definition in registry.definitions():
        for part in PARTS:
            assert callable(getattr(definition, part)), (definition.kind, part)
        assert definition.rules, definition.kind
        if definition.traits.window:
            assert definition.emit_rows is not None, definition.kind


def test_builtin_codes_are_tflites_own() -> None:
    for definition in registry.definitions():
        if definition.custom_code is not None:  # a CUSTOM op (Vela's ethos-u): found by its custom code
            assert definition.builtin == tflite.BuiltinOperator.CUSTOM
            assert registry.by_custom(definition.custom_code) is definition
            continue
        assert getattr(tflite.BuiltinOperator, definition.kind.name) == definition.builtin
        assert registry.by_builtin(definition.builtin) is definition


def test_custom_codes_without_a_definition_are_user_kernels() -> None:
    """CUSTOM ops other than those registered by custom code (Vela's) are the CUSTOM kind, whose
    kernel the user supplies (--custom-op)."""
    assert registry.by_builtin(tflite.BuiltinOperator.CUSTOM) is registry.op_def(OpKind.CUSTOM)
    assert registry.by_custom("MyFancyOp") is None


def test_roles_name_existing_inputs() -> None:
    for definition in registry.definitions():
        roles = definition.roles
        if roles.bias is not None:
            assert roles.weights is not None and roles.bias != roles.weights, definition.kind


def test_each_kind_is_defined_in_the_package_the_registry_imports_for_it() -> None:
    """op_def imports only package_of(kind): a kind defined elsewhere would be missing."""
    for package in registry.PACKAGES:
        family = importlib.import_module(f"mcugen.ops.{package}")
        for definition in family.OPS:
            assert registry.package_of(definition.kind) == package, definition.kind
    assert {registry.package_of(kind) for kind in OpKind} == set(registry.PACKAGES)


def test_custom_codes_are_the_definitions_own() -> None:
    by_code = {d.custom_code: d.kind for d in registry.definitions() if d.custom_code is not None}
    assert by_code == registry.CUSTOM_CODES


def test_a_build_imports_only_the_families_of_its_ops(tmp_path: Path) -> None:
    """In a fresh process: importing the registry imports no family; building a model imports
    the families of its ops and none other (the rest is ~100 M instructions of every build)."""
    script = (
        "import sys\n"
        "import mcugen.ops.registry\n"
        "print(sorted(m for m in sys.modules if m.startswith('mcugen.ops.') and m.count('.') == 2))\n"
        "from mcugen.cli import main\n"
        f"main(['build', {str(MODEL)!r}, '-o', {str(tmp_path / 'out')!r}], standalone_mode=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith('mcugen.ops.') and m.count('.') == 2))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCUGEN_CACHE_DIR": ""}  # no template cache written
    lines = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    before, after = ast.literal_eval(lines[0]), ast.literal_eval(lines[-1])
    assert not set(before) & {f"mcugen.ops.{p}" for p in registry.PACKAGES}
    families = {m.split(".")[2] for m in after} & set(registry.PACKAGES)
    graph = load_graph(MODEL)
    assert families == {registry.package_of(op.kind) for op in graph.ops}
