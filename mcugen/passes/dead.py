"""Dead code: an op none of whose outputs is read by a kept op or is a graph output, and that
writes no variable's state (ASSIGN_VARIABLE is kept: a later invoke reads what it writes)."""

from __future__ import annotations

from ..ir import Graph, OpKind
from .report import PassReport, Rewrite


def remove_dead_ops(graph: Graph, report: PassReport) -> None:
    needed = {id(t) for t in graph.outputs}
    kept = []
    for op in reversed(graph.ops):
        if any(id(t) in needed for t in op.outputs) or op.kind is OpKind.ASSIGN_VARIABLE:
            kept.append(op)
            needed.update(id(t) for t in op.inputs if t is not None)
        else:
            report.record(op, Rewrite.DEAD)
    graph.ops = kept[::-1]
    graph.link()
