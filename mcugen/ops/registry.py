"""The op registry: one OpDef per op kind, gathered from the families (mcugen/ops/<family>/).

The frontend, the passes, the support stage, the memory planner and tiling, the code
generator, the numpy reference and the analysis read every per-kind fact through here; no
stage keeps a table of its own.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import UnsupportedError
from ..ir import Op, OpKind
from ..targets import Target
from . import (
    activation,
    conv,
    custom,
    elementwise,
    matmul,
    movement,
    npu,
    pool,
    quantize,
    reduce,
    resize,
    shape,
    state,
)
from .base import OpDef

# Every family package exports OPS, its kinds' definitions.
FAMILIES = (conv, matmul, pool, elementwise, reduce, activation, quantize, shape, movement, resize, npu, custom,
            state)


def _index(families: tuple) -> dict[OpKind, OpDef]:
    table: dict[OpKind, OpDef] = {}
    for family in families:
        for definition in family.OPS:
            if definition.kind in table:
                raise AssertionError(f"{definition.kind.name} is defined twice")
            table[definition.kind] = definition
    return table


DEFINITIONS: dict[OpKind, OpDef] = _index(FAMILIES)
_BY_BUILTIN: dict[int, OpDef] = {definition.builtin: definition for definition in DEFINITIONS.values()
                                  if definition.custom_code is None}
_BY_CUSTOM: dict[str, OpDef] = {definition.custom_code: definition for definition in DEFINITIONS.values()
                                if definition.custom_code is not None}


def definitions() -> list[OpDef]:
    """Every definition, in OpKind order."""
    return [DEFINITIONS[kind] for kind in OpKind if kind in DEFINITIONS]


def op_def(kind: OpKind) -> OpDef:
    try:  # one lookup: the planner asks thousands of times, and an enum hashes in Python
        return DEFINITIONS[kind]
    except KeyError:
        registered = ", ".join(sorted(k.name for k in DEFINITIONS))
        raise UnsupportedError(f"{kind.name}: no op definition (registered: {registered})") from None


def by_builtin(code: int) -> OpDef | None:
    """The definition of a TFLite builtin code; None for a builtin mcugen does not know."""
    return _BY_BUILTIN.get(code)


def by_custom(code: str) -> OpDef | None:
    """The definition of a CUSTOM op's custom_code; None for one mcugen does not know."""
    return _BY_CUSTOM.get(code)


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
