"""Constant folding: ops whose inputs are all constant become constants at build time."""

from __future__ import annotations

from ..ir import Graph, OpKind


def fold_constant_reshapes(graph: Graph) -> None:
    """A RESHAPE of a constant is the constant with a new shape: no op, no copy on the device."""
    kept = []
    for op in graph.ops:
        source = op.inputs[0] if op.inputs else None
        if op.kind is OpKind.RESHAPE and source is not None and source.is_constant:
            target = op.outputs[0]
            if target not in graph.outputs:
                assert source.data is not None
                target.data = source.data.reshape(target.shape)
                continue
        kept.append(op)
    graph.ops = kept
