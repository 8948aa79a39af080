"""The op registry: one OpDef per op kind, gathered from the families (mcugen/ops/<family>/).

The frontend, the passes, the support stage, the memory planner and tiling, the code
generator, the numpy reference and the analysis read every per-kind fact through here; no
stage keeps a table of its own. A family is imported when one of its kinds is first looked up
(`definitions()` imports them all): other modules import a family's modules only inside the
functions that need them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import tflite

from ..errors import UnsupportedError
from ..ir import Op, OpKind
from ..targets import Target
from .base import OpDef

# The family packages (mcugen/ops/<package>/), each exporting OPS, its kinds' definitions. A
# package is imported when one of its kinds is first looked up: a build imports only the
# families its model uses (importing all of them is ~100 M instructions of every build).
PACKAGES = ("conv", "matmul", "pool", "elementwise", "reduce", "activation", "quantize", "shape", "movement",
            "resize", "npu", "custom", "state")
# Where a kind's package is not its OpKind family's name (tests/test_registry.py checks the table).
_PACKAGE_OF_FAMILY = {"unary": "activation"}
_PACKAGE_OF_KIND = {OpKind.PRELU: "elementwise"}
# Kinds read from a CUSTOM op by its custom code; every other kind's builtin code is TFLite's
# BuiltinOperator of the kind's name.
CUSTOM_CODES = {"ethos-u": OpKind.ETHOS_U}

# The definitions of the packages imported so far (tests may patch entries).
DEFINITIONS: dict[OpKind, OpDef] = {}
_LOADED: set[str] = set()
_KIND_OF_BUILTIN: dict[int, OpKind] = {}


def package_of(kind: OpKind) -> str:
    """The name of the family package that defines `kind`."""
    return _PACKAGE_OF_KIND.get(kind) or _PACKAGE_OF_FAMILY.get(kind.family, kind.family)


def _load(package: str) -> None:
    if package in _LOADED:
        return
    family = importlib.import_module(f"{__package__}.{package}")
    for definition in family.OPS:
        if package_of(definition.kind) != package:
            raise AssertionError(f"{definition.kind.name} is defined in {package}, "
                                 f"not in {package_of(definition.kind)}")
        if definition.kind in DEFINITIONS:
            raise AssertionError(f"{definition.kind.name} is defined twice")
        DEFINITIONS[definition.kind] = definition
    _LOADED.add(package)


def definitions() -> list[OpDef]:
    """Every definition, in OpKind order (every family imported)."""
    for package in PACKAGES:
        _load(package)
    return [DEFINITIONS[kind] for kind in OpKind if kind in DEFINITIONS]


def op_def(kind: OpKind) -> OpDef:
    try:  # one lookup: the planner asks thousands of times, and an enum hashes in Python
        return DEFINITIONS[kind]
    except KeyError:
        pass
    _load(package_of(kind))
    try:
        return DEFINITIONS[kind]
    except KeyError:
        registered = ", ".join(sorted(k.name for k in DEFINITIONS))
        raise UnsupportedError(f"{kind.name}: no op definition (registered: {registered})") from None


def by_builtin(code: int) -> OpDef | None:
    """The definition of a TFLite builtin code; None for a builtin mcugen does not know."""
    if not _KIND_OF_BUILTIN:
        custom = set(CUSTOM_CODES.values())
        _KIND_OF_BUILTIN.update((getattr(tflite.BuiltinOperator, kind.name), kind)
                                for kind in OpKind if kind not in custom)
    kind = _KIND_OF_BUILTIN.get(code)
    return None if kind is None else op_def(kind)


def by_custom(code: str) -> OpDef | None:
    """The definition of a CUSTOM op's custom_code; None for one mcugen does not know."""
    kind = CUSTOM_CODES.get(code)
    return None if kind is None else op_def(kind)


def op_macs(op: Op) -> int:
    """Multiply-accumulates of one inference of `op`, as TFLite-based tools count them."""
    return op_def(op.kind).macs(op)


def fast_path_scratch_bytes(target: Target) -> Callable[[Op], int]:
    """op -> the part of scratch_bytes(target) that only the op's fast path needs (0 where the
    target compiles none): what the planner may leave out to run the portable C."""

    def bytes_for(op: Op) -> int:
        return op_def(op.kind).fast_path_scratch(op, target) if target.plans_fast_path_scratch else 0

    return bytes_for


def scratch_bytes(target: Target) -> Callable[[Op], int]:
    """op -> scratch bytes to plan for `target`: the portable kernel's, plus the fast path's
    where the target compiles fast paths."""

    def bytes_for(op: Op) -> int:
        definition = op_def(op.kind)
        fast = definition.fast_path_scratch(op, target) if target.plans_fast_path_scratch else 0
        return definition.scratch(op) + fast

    return bytes_for
