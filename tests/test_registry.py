"""The op registry: every op kind has one complete definition, and its facts agree with TFLite."""

from __future__ import annotations

import tflite

from mcugen.ir import OpKind
from mcugen.ops import registry

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
