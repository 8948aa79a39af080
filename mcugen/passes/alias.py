"""Aliases: RESHAPE, SQUEEZE and EXPAND_DIMS only view their input's bytes under another shape.

The planner gives such an op's output its input's buffer (ALIAS_KINDS, memory/traits.py) and
the code generator emits nothing for it. This module keeps the graph side in step: a chain of
aliases is collapsed into one RESHAPE of the chain's source, so every alias reads a tensor some
real op (or the caller) writes, and `alias_source` names that tensor for the other passes.
"""

from __future__ import annotations

from ..ir import NoOptions, Op, OpKind, Tensor
from ..memory.traits import ALIAS_KINDS


def is_alias(op: Op) -> bool:
    """Does the op only re-view its first input's bytes (same dtype, same byte count)?"""
    if op.kind not in ALIAS_KINDS or not op.inputs or op.inputs[0] is None or len(op.outputs) != 1:
        return False
    source, target = op.inputs[0], op.outputs[0]
    return source.dtype is target.dtype and source.num_elements == target.num_elements


def alias_source(op: Op) -> Tensor | None:
    return op.inputs[0] if is_alias(op) else None


def as_reshape(op: Op, source: Tensor) -> Op:
    """The op rewritten as a RESHAPE of `source` into its own output (same file index)."""
    return Op(kind=OpKind.RESHAPE, inputs=[source], outputs=list(op.outputs), options=NoOptions(),
              index=op.index, backend=op.backend)


def collapse_chain(op: Op) -> Op | None:
    """An alias of an alias's output, rewritten to read the first alias's source; None when the
    op is no alias or its input is not an alias's output. Bytes do not change along a chain,
    so the result is the same whatever the intermediate tensors' shapes or quantization."""
    source = alias_source(op)
    if source is None or source.producer is None or not is_alias(source.producer):
        return None
    root = source.producer.inputs[0]
    assert root is not None
    return as_reshape(op, root)
