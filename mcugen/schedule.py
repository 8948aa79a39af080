"""Operator order.

For now the order stored in the model, which the TFLite converter already made topological;
`verify_order` checks that it is (every op's activation inputs produced before it runs).
"""

from __future__ import annotations

from .errors import ModelError
from .ir import Graph, Op


def schedule(graph: Graph) -> list[Op]:
    order = list(graph.ops)
    verify_order(graph, order)
    return order


def verify_order(graph: Graph, order: list[Op]) -> None:
    ready = {id(t) for t in graph.inputs}
    for op in order:
        for tensor in op.inputs:
            if tensor is not None and not tensor.is_constant and id(tensor) not in ready:
                raise ModelError(f"{op.where()}: runs before its input '{tensor.name}' is produced")
        ready.update(id(t) for t in op.outputs)
