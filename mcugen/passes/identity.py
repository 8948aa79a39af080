"""Ops that do nothing: their output holds exactly their input's values.

Each kind says when it does nothing through its definition's `identity` predicate
(mcugen/ops/<family>/: a QUANTIZE to the same dtype, scale and zero point; RESHAPE, SQUEEZE,
EXPAND_DIMS to the input's own shape; PAD and PADV2 by zero; SLICE of the whole tensor;
TRANSPOSE by the identity permutation; CONCATENATION of one tensor). `identity_source` returns
the input the output equals. Dtype and quantization must match too: a consumer reads the
output's scale and zero point, so rewiring it to an input quantized differently would change
what it computes.

Removed ops' consumers read the input instead. An op that does nothing but produces a graph
output is kept as an alias of its input (a RESHAPE, which the planner gives its input's
bytes), so the graph output keeps its place and value and nothing is copied; a chain of
aliases is collapsed to one (alias.py).
"""

from __future__ import annotations

from ..ir import Graph, Op, Tensor
from ..ops.registry import op_def
from .alias import as_reshape, collapse_chain, is_alias
from .report import PassReport, Rewrite


def remove_identities(graph: Graph, report: PassReport) -> None:
    graph.link()
    outputs = {id(t) for t in graph.outputs}
    kept: list[Op] = []
    for op in graph.ops:
        collapsed = collapse_chain(op)
        if collapsed is not None:
            report.record(op, Rewrite.ALIASED)
            _replace(op, collapsed)
            op = collapsed
        source = identity_source(op)
        if source is None:
            kept.append(op)
            continue
        target = op.outputs[0]
        if id(target) in outputs:
            if not is_alias(op):
                report.record(op, Rewrite.ALIASED)
                alias = as_reshape(op, source)
                _replace(op, alias)
                op = alias
            kept.append(op)
            continue
        report.record(op, Rewrite.IDENTITY)
        for consumer in list(target.consumers):
            consumer.inputs = [source if t is target else t for t in consumer.inputs]
            source.consumers.append(consumer)
        target.consumers = []
    graph.ops = kept
    graph.link()


def _replace(old: Op, new: Op) -> None:
    """Keep producer links current while the sweep runs (graph.link() redoes them after)."""
    for tensor in old.inputs:
        if tensor is not None and old in tensor.consumers:
            tensor.consumers.remove(old)
    for tensor in new.inputs:
        if tensor is not None:
            tensor.consumers.append(new)
    for tensor in new.outputs:
        tensor.producer = new


def identity_source(op: Op) -> Tensor | None:
    """The input whose values the op's single output holds unchanged, or None."""
    if len(op.outputs) != 1 or not op.inputs or op.inputs[0] is None:
        return None
    source, target = op.inputs[0], op.outputs[0]
    if source.pin is not None or target.pin is not None:  # Vela fixed its offset: the NPU reads it there
        return None
    if source.dtype is not target.dtype or source.quant != target.quant or source.shape != target.shape:
        return None
    check = op_def(op.kind).identity
    return source if check is not None and check(op) else None
